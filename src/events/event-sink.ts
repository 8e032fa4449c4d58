/** An event as published, as JSON text: `data` is stored as JSON, so it goes in as it is. */
export const publishedJson = (id: string, type: string, at: number, data: string): string =>
  `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"timestamp":"${new Date(at).toISOString()}","data":${data}}`;
