/**
 * The entry point the Functions host loads (`package.json` `main`, bundled to
 * dist/functions/index.js): every HTTP function of the route table (routeTable.ts) and the
 * timers (timers.ts) registered.
 */
import { app } from '@azure/functions';
import { startTelemetry, stopTelemetry } from '../src/telemetry';
import { routeTable } from './routeTable';
import './timers';

for (const { name, handler, ...registration } of routeTable) app.http(name, { ...registration, handler });
// Before any call: the exporters, only when configured (nothing is loaded otherwise).
startTelemetry();
// What is buffered is sent before the worker stops.
app.hook.appTerminate(() => stopTelemetry());
export { routesOff, settingsSummary } from '../src/app';
