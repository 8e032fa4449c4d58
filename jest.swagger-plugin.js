/**
 * The @nestjs/swagger CLI plugin as a ts-jest AST transformer. ts-jest hands it the program
 * of its language service: the plugin needs the type checker, so the project that uses it
 * must not run ts-jest with isolatedModules.
 */
const plugin = require('@nestjs/swagger/plugin');

module.exports = {
  name: 'nestjs-swagger-plugin',
  version: 1,
  factory: (compiler, options) => plugin.before({ ...options }, compiler.program),
};
