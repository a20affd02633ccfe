/** Every setting, its one default and its check; what the storage settings name; the bounds that stay constants. */
export { azureMarkerOf } from './azureMarkers';
export { ConfigError, defaultSettings, getConfig, resetConfigForTests } from './config';
export type { Config, Settings } from './config';
export { engineLimits } from './limits';
export { accessClasses } from './settingValues';
export type { AccessClass, CertificateEnvironment } from './settingValues';
export { describeIdentityStorage, developmentStorage } from './storageSettings';
export type { StorageTarget } from './storageSettings';
export { nextRunOf, parseTimerSchedule, runTimesOf } from './timerSchedule';
export type { TimerSchedule } from './timerSchedule';
