/**
 * The operator console: the page and its files (anonymous: they hold no data), and the keyed
 * session route the page asks what its caller may do. Registration and glue only: the page's
 * own code is built to files beside the bundle (tools/build.mjs) and read when asked for.
 */
import { app } from '@azure/functions';
import { appRoutes, registrationOf } from '../src/appRoutes';
import { consoleAssetResponse, consolePageResponse } from '../src/console/consoleFiles';
import { consoleSession } from '../src/console/consoleSession';
import { appHandler } from '../src/http/appHandler';
import { jsonResponse } from '../src/http/responses';

export const getConsolePage = appHandler(appRoutes.consolePage, consolePageResponse);

export const getConsoleAsset = appHandler(appRoutes.consoleAsset, (call) => consoleAssetResponse(call.request.params.file));

export const getConsoleSession = appHandler(appRoutes.consoleSession, async (call) => jsonResponse(200, consoleSession(call.services, call.caller), call.correlationId));

app.http(appRoutes.consolePage.name, { ...registrationOf(appRoutes.consolePage), handler: getConsolePage });
app.http(appRoutes.consoleAsset.name, { ...registrationOf(appRoutes.consoleAsset), handler: getConsoleAsset });
app.http(appRoutes.consoleSession.name, { ...registrationOf(appRoutes.consoleSession), handler: getConsoleSession });
