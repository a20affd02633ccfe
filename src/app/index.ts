/** The wiring: the one place that builds every part of the app from its settings, and the start-up summary of what runs. */
export { getServices } from './services';
export { routesOff, settingsSummary } from './settingsSummary';
export type { EmbeddedServices } from './settingsSummary';
