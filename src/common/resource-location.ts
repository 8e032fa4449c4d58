/** The version segment every API route lives under (the contract's base URLs end in it). */
export const API_PREFIX = 'v1';

/** Where a created resource lives: `/v1/<collection>/<id>`, the `Location` of its 201. */
export function resourceLocation(collection: string, id: number): string {
  return `/${API_PREFIX}/${collection}/${id}`;
}

/** The OpenAPI description of that `Location` header, for a create's 201 response. */
export function locationHeaderDocs(collection: string, noun: string) {
  return {
    Location: {
      description: `The URL of the new ${noun}.`,
      required: true,
      schema: {
        type: 'string',
        maxLength: API_PREFIX.length + collection.length + 19,
        pattern: `^/${API_PREFIX}/${collection}/[1-9][0-9]{0,15}$`,
        example: resourceLocation(collection, 1),
      },
    },
  };
}
