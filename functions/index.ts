/**
 * The entry point the Functions host loads (`package.json` `main`, bundled to
 * dist/functions/index.js): importing each area registers its functions.
 */
import './operations';
import './health';
import './orchestrations';
import './certificates';
import './templates';
import './chatops';
import './console';
export { settingsSummary } from '../src/settingsSummary';
