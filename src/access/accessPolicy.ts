/**
 * ACCESS_POLICY: which callers may use which operations, in which
 * scopes, at what rate. A caller gets the union of the rules that name it; what no rule allows
 * is refused before anything is sent upstream. Unset, every caller may do everything (within
 * ALLOWED_SCOPES), as before the policy existed.
 *
 * A rule names callers (`key:<fingerprint>`, `principal:<object id>`, `role:<app role>`,
 * `slack:<team>/<user>`, `teams:<tenant>/<AAD object id>`, `*`)
 * and what they may do: operation ids, function or app-route names, or the classes `read`,
 * `write`, `secrets` (the certificate download) and `admin` (every orchestration, not only
 * one's own). A rule's scopes bound every grant of the rule, `admin` included: an orchestration
 * is in its target resource's scope.
 *
 * A rule may also ask for approval (`approval`): the long-running starts it allows, within its
 * scopes, then wait until `count` distinct callers its `approvers` name approve them (never the
 * starter). Where one rule of a caller needs approval for a start and another allows it without,
 * approval is needed: the stricter wins.
 */
import { isScopeAllowed } from '../rules';
import type { AccessClass } from '../settings';

export { accessClasses, type AccessClass } from '../settings';

export interface CallerRate {
  readsPerMinute?: number;
  writesPerMinute?: number;
}

export interface RuleApproval {
  count: number;
  /** Selectors as in `callers`: keys, principals, roles, chat users (never `*`). */
  approvers: string[];
  expiresAfterMinutes?: number;
}

export interface AccessRule {
  callers: string[];
  allow: string[];
  scopes?: string[];
  rate?: CallerRate;
  approval?: RuleApproval;
}

/** What a start must wait for: approvals from `required` distinct callers `approvers` names, within `expiresAfterMinutes` (undefined: the default). */
export interface ApprovalRequirement {
  required: number;
  /** As the rule wrote them. */
  approvers: string[];
  expiresAfterMinutes?: number;
}

/** Who is calling, as the policy sees it (see caller.ts). */
export interface Caller {
  /** The most specific name: `principal:<object id>`, else `key:<fingerprint>`, else `anonymous`. */
  primary: string;
  /** Every selector that names the caller: its principal, its key, each of its app roles. */
  selectors: string[];
}

/** What a caller is about to do: its names (operation id, function name) and its class. */
export interface Action {
  names: readonly string[];
  access: Exclude<AccessClass, 'admin'>;
  /**
   * The action acts on nothing a scope can name (the certificate routes: a lifecycle service's
   * project and environment, not a management scope). A rule limited to scopes never grants it,
   * or a rule meant for one resource group would hand out every environment's secret.
   */
  unscoped?: boolean;
}

/** What a caller may do with an action: where (undefined: any scope), and how often (undefined: no limit). */
export interface Grant {
  scopes?: string[];
  rate?: CallerRate;
  /** Whose share of the upstream the calls are charged to (see #rateSubject). */
  rateSubject?: string;
}

/** Selectors compare case-insensitively for keys, principals and Teams users (hex, GUIDs); app roles and Slack ids as written. */
export function normalizeSelector(selector: string): string {
  return /^(key|principal|teams):/i.test(selector) ? selector.toLowerCase() : selector;
}

/** Where several rules together reach: undefined (any scope) when one of them is not limited to scopes. */
function scopesOf(rules: readonly AccessRule[]): string[] | undefined {
  return rules.some((rule) => !rule.scopes) ? undefined : [...new Set(rules.flatMap((rule) => rule.scopes!))];
}

/** The most generous of several limits: undefined (no limit) wins. */
function loosest(values: (number | undefined)[]): number | undefined {
  return values.some((value) => value === undefined) ? undefined : Math.max(...(values as number[]));
}

export class AccessPolicy {
  readonly #rules: readonly AccessRule[] | undefined;
  /** Every selector a rule names, normalized, and the kinds of them (`slack:`, `key:`, ...). */
  readonly #named: ReadonlySet<string>;
  readonly #namedKinds: ReadonlySet<string>;

  constructor(rules: readonly AccessRule[] | undefined) {
    this.#rules = rules?.map((rule) => ({ ...rule, callers: rule.callers.map(normalizeSelector) }));
    // An approver is a caller of the routes that decide: naming chat users as approvers turns
    // their platform's route on, as naming them in `callers` does.
    this.#named = new Set((this.#rules ?? []).flatMap((rule) => [...rule.callers, ...(rule.approval?.approvers ?? []).map(normalizeSelector)]));
    this.#namedKinds = new Set([...this.#named].map((selector) => selector.slice(0, selector.indexOf(':') + 1)));
  }

  /** Whether a rule names `selector` itself (not through `*` or a role). */
  names(selector: string): boolean {
    return this.#named.has(normalizeSelector(selector));
  }

  /**
   * Whether a rule names a caller of a kind (`slack:`, `teams:`). Kinds are lower case, as the
   * ACCESS_POLICY schema requires them, so a kind is named exactly when a caller of it can be.
   */
  namesKind(kind: `${string}:`): boolean {
    return this.#namedKinds.has(kind);
  }

  /** Whether a policy is set at all (unset: every caller may do everything). */
  get enforced(): boolean {
    return this.#rules !== undefined;
  }

  #rulesFor(caller: Caller): readonly AccessRule[] {
    const selectors = new Set(['*', ...caller.selectors.map(normalizeSelector)]);
    return (this.#rules ?? []).filter((rule) => rule.callers.some((selector) => selectors.has(selector)));
  }

  /**
   * Whose share the calls are charged to: the key or principal a rate-bearing rule names, so a
   * key's share stays the key's whichever principals send it; a rule for a role or for `*`
   * gives each caller a share of its own.
   */
  #rateSubject(caller: Caller, rules: readonly AccessRule[]): string {
    const own = new Set(caller.selectors.map(normalizeSelector));
    const named = rules.flatMap((rule) => rule.callers).find((selector) => /^(key|principal):/.test(selector) && own.has(selector));
    return named ?? caller.primary;
  }

  /** What the caller may do with `action`, or undefined when no rule allows it. */
  grant(caller: Caller, action: Action): Grant | undefined {
    if (!this.#rules) return {};
    const matching = this.#rulesFor(caller).filter(
      (rule) => rule.allow.some((entry) => entry === action.access || action.names.includes(entry)) && !(action.unscoped && rule.scopes),
    );
    if (matching.length === 0) return undefined;
    const scopes = scopesOf(matching);
    const rates = matching.map((rule) => rule.rate);
    const rate = rates.some((limit) => limit === undefined)
      ? undefined
      : { readsPerMinute: loosest(rates.map((limit) => limit!.readsPerMinute)), writesPerMinute: loosest(rates.map((limit) => limit!.writesPerMinute)) };
    return rate
      ? {
          scopes,
          rate,
          rateSubject: this.#rateSubject(
            caller,
            matching.filter((rule) => rule.rate),
          ),
        }
      : { scopes, rate };
  }

  /** Whether some rule lets the caller do `action` at all (somewhere, at some rate). */
  allows(caller: Caller, action: Action): boolean {
    return this.grant(caller, action) !== undefined;
  }

  /**
   * The approval a start of `action` on `targetPath` needs, or undefined when none does: every
   * rule of the caller that allows the action, reaches the target and asks for approval counts,
   * whether or not another allows it without (the stricter wins). Of several, the one asking the
   * most approvals is taken (the first of equals), with the shortest expiry any of them gives.
   */
  approvalFor(caller: Caller, action: Action, targetPath: string): ApprovalRequirement | undefined {
    const asking = this.#rulesFor(caller).filter(
      (rule) => rule.approval && rule.allow.some((entry) => entry === action.access || action.names.includes(entry)) && isScopeAllowed(targetPath, rule.scopes),
    );
    if (asking.length === 0) return undefined;
    const strictest = asking.reduce((most, rule) => (rule.approval!.count > most.approval!.count ? rule : most));
    const expiries = asking.map((rule) => rule.approval!.expiresAfterMinutes).filter((minutes): minutes is number => minutes !== undefined);
    const { count, approvers } = strictest.approval!;
    return { required: count, approvers: [...approvers], ...(expiries.length > 0 ? { expiresAfterMinutes: Math.min(...expiries) } : {}) };
  }

  /** Whether some rule names the caller among its approvers (by its key, principal, a role, its chat user). */
  namesApprover(caller: Caller): boolean {
    return (this.#rules ?? []).some((rule) => rule.approval !== undefined && matchesAny(caller, rule.approval.approvers));
  }

  /**
   * Where the caller may see and act on any orchestration, not only its own: undefined when it
   * has `admin` nowhere, `scopes` undefined when everywhere, else the scopes of its `admin` rules.
   */
  adminGrant(caller: Caller): Pick<Grant, 'scopes'> | undefined {
    if (!this.#rules) return {};
    const admin = this.#rulesFor(caller).filter((rule) => rule.allow.includes('admin'));
    return admin.length === 0 ? undefined : { scopes: scopesOf(admin) };
  }

  /** Whether the caller may see an orchestration: its own, or one in a scope where it has `admin` (its target's). */
  maySee(caller: Caller, orchestration: { startedBy?: string; target?: string }): boolean {
    if (orchestration.startedBy === caller.primary) return true;
    const admin = this.adminGrant(caller);
    return admin !== undefined && (!admin.scopes || (orchestration.target !== undefined && isScopeAllowed(orchestration.target, admin.scopes)));
  }
}

/** Whether one of `selectors` (as a rule writes them: keys, principals, roles, chat users) names the caller; `*` never does here. */
export function matchesAny(caller: Caller, selectors: readonly string[]): boolean {
  const own = new Set(caller.selectors.map(normalizeSelector));
  return selectors.some((selector) => selector !== '*' && own.has(normalizeSelector(selector)));
}

const parsedPolicies = new WeakMap<object, AccessPolicy>();

/**
 * The app's one parsed policy for its settings: the routes, the chat routes' on-switch and the
 * orchestration's notifier all ask this one, so none of them can read ACCESS_POLICY differently.
 */
export function accessPolicyOf(config: { readonly ACCESS_POLICY?: readonly AccessRule[] }): AccessPolicy {
  let policy = parsedPolicies.get(config);
  if (!policy) parsedPolicies.set(config, (policy = new AccessPolicy(config.ACCESS_POLICY)));
  return policy;
}
