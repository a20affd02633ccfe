/**
 * The entry point the Functions host loads (`package.json` `main`, bundled to
 * dist/functions/index.js): importing each area registers its functions.
 */
import { app } from '@azure/functions';
import { startTelemetry, stopTelemetry } from '../src/telemetry/telemetry';
import './operations';
import './health';
import './orchestrations';
import './certificates';
import './templates';
import './chatops';
import './console';
import './approvals';
// Before any call: the exporters, only when configured (nothing is loaded otherwise).
startTelemetry();
// What is buffered is sent before the worker stops.
app.hook.appTerminate(() => stopTelemetry());
export { routesOff, settingsSummary } from '../src/settingsSummary';
