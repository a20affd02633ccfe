/**
 * What a handler is given to work with: the app's collaborators, built once per process from
 * the settings (src/app/services.ts builds them) and passed in (STYLE.md: dependencies are
 * passed in, never reached for globally by the logic). Types only: every layer above the parts
 * may name them without loading their wiring.
 */
import type { AccessPolicy } from './access';
import type { CallerRates } from './access';
import type { WaitSlots } from './access';
import type { Approvals } from './approvals';
import type { CertificateRefresher } from './certificates';
import type { CertificateStore } from './certificates';
import type { DownloadGuard } from './certificates';
import type { HealthMonitor } from './health';
import type { OrchestrationEngine } from './orchestration';
import type { OrchestrationWatches } from './orchestration';
import type { Config } from './settings';
import type { OnceMarkers } from './storage';
import type { TokenSource, UpstreamName } from './upstream';
import type { UpstreamBudget } from './upstream';
import type { UpstreamClient } from './upstream';

export interface Services {
  config: Config;
  upstreams: Record<UpstreamName, UpstreamClient>;
  tokens: TokenSource;
  /** Tokens for work no caller is waiting on (timers); none where only callers hold them. */
  backgroundToken(upstream: UpstreamName): Promise<string | undefined>;
  orchestrations: OrchestrationEngine;
  /** The starts that wait for approval, on the engine's held starts (src/approvals). */
  approvals: Approvals;
  /** The chat routes' replay records, shared by every instance (chatops/chatReplays.ts). */
  chatReplays: Pick<OnceMarkers, 'take'>;
  /** `gateway-wait`: the watches shared by the waiters on one orchestration, and the bounds on held waits. */
  waits: { watches: OrchestrationWatches; slots: WaitSlots };
  certificates: { refresher: CertificateRefresher; store: CertificateStore; downloadGuard: DownloadGuard };
  health: HealthMonitor;
  /** ACCESS_POLICY and the callers' shares of the upstream, held across instances. */
  access: { policy: AccessPolicy; rates: CallerRates };
  /** The management service's last remaining-request counts. */
  upstreamBudget: UpstreamBudget;
  now: () => number;
}
