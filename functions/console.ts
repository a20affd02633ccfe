/**
 * The operator console: the page and its files (anonymous: they hold no data), and the keyed
 * session route the page asks what its caller may do. Registration and glue only: the page's
 * own code is built to files beside the bundle (tools/build.mjs) and read when asked for.
 */
import { appRoutes } from '../src/routes';
import { consoleAssetResponse, consolePageResponse, withConsoleHeaders } from '../src/console';
import { consoleSession } from '../src/console';
import { getServices } from '../src/app';
import { appHandlerOn } from '../src/http';
import { jsonResponse } from '../src/calls';

const appHandler = appHandlerOn(getServices);

export const getConsolePage = withConsoleHeaders(appHandler(appRoutes.consolePage, (call) => consolePageResponse(call.request.url)));

export const getConsoleAsset = withConsoleHeaders(appHandler(appRoutes.consoleAsset, (call) => consoleAssetResponse(call.request.params.file)));

// What a caller may do is its own: no cache (a browser's or a proxy's) keeps it.
export const getConsoleSession = withConsoleHeaders(
  appHandler(appRoutes.consoleSession, async (call) => jsonResponse(200, consoleSession(call.services, call.caller), call.correlationId)),
  { 'cache-control': 'no-store' },
);
