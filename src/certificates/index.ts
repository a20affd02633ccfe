/** The environments' certificate bundles: downloaded under the rate limit, checked, stored, made current, and watched for expiry. */
export { CertificateRefresher } from './certificateRefresher';
export type { CertificateEnvironment } from './certificateRefresher';
export { CertificateStore } from './certificateStore';
export { CertificateWatch } from './certificateWatch';
export type { CertificateWatchReport, WatchPolicy } from './certificateWatch';
export { DownloadGuard } from './downloadGuard';
export { fetchedCertificate } from './fetchedCertificate';
export { readPkcs12 } from './pkcs12Reader';
export { DistributedRateLimiter } from './rateLimiter';
