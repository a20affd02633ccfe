/**
 * Makes `require('@azure/functions-core')` return this host's core API, as the Node worker
 * does for the app it loads. Works for the esbuild bundle, which leaves that module external.
 */
import Module from 'node:module';
import * as coreApi from './coreApi';

const coreModuleName = '@azure/functions-core';
const resolvedId = `\0${coreModuleName}`;

type ResolveFilename = (request: string, ...rest: unknown[]) => string;

export function installFunctionsCore(): void {
  const moduleInternals = Module as unknown as { _resolveFilename: ResolveFilename; _cache: Record<string, unknown> };
  if (moduleInternals._cache[resolvedId]) return;
  const original = moduleInternals._resolveFilename;
  moduleInternals._resolveFilename = function resolve(request: string, ...rest: unknown[]) {
    return request === coreModuleName ? resolvedId : original.call(this, request, ...rest);
  };
  const coreModule = new Module(resolvedId);
  coreModule.exports = coreApi;
  coreModule.loaded = true;
  moduleInternals._cache[resolvedId] = coreModule;
}
