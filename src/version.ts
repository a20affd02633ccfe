/** The app's version, from package.json (esbuild inlines it into the bundle). */
import { version } from '../package.json';

export const appVersion: string = version;
