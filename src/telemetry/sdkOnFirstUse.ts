/**
 * The OpenTelemetry SDK with its exporters and the app's spans and metrics (exportSdk.ts), loaded
 * by the first export set-up: the build makes exportSdk.ts a file of its own, as it does the
 * packages of src/loading/lazyPackages.ts, so a process that exports nothing never loads it.
 */
import { onFirstUse } from '../loading';
import type * as TelemetrySdk from './exportSdk';

export const telemetrySdkPackage = onFirstUse<typeof TelemetrySdk>(require.resolve('./exportSdk'));
