/**
 * Who a caller is, for an approval's two rules: never its starter, each approver once. A person
 * can call under several names at once (a principal with a key) or one after another (the key
 * alone, the same person in Teams), so a start keeps every name its starter called with, each
 * decision every name its maker called with, and two callers are one when they share a name. A
 * principal and a Teams user are one when their AAD object ids match (`principal:<object id>`,
 * `teams:<tenant>/<object id>`): counting them as one only ever refuses more. Roles name groups,
 * not persons, and a Slack id links to no other name.
 */
import { normalizeSelector } from '../access';
import type { ApprovalDecisionRecord, ApprovalStatus } from '../orchestration';

/** The names that identify the caller itself: its keys (fingerprints), principal and chat user, never its roles. */
export function identitiesOf(caller: { primary: string; selectors: readonly string[] }): string[] {
  const names = caller.selectors.filter((selector) => /^(key|principal|teams|slack):/i.test(selector)).map(normalizeSelector);
  return names.length > 0 ? [...new Set(names)] : [caller.primary];
}

/** A name as a person: a principal and a Teams user by their object id, any other name as itself. */
function personOf(identity: string): string {
  const name = normalizeSelector(identity);
  const teams = /^teams:[^/]*\/(.+)$/.exec(name);
  if (teams) return `oid:${teams[1]}`;
  return name.startsWith('principal:') ? `oid:${name.slice('principal:'.length)}` : name;
}

/** Whether two callers, given by their names, are one. */
export function sameCaller(one: readonly string[], other: readonly string[]): boolean {
  const persons = new Set(one.map(personOf));
  return other.some((identity) => persons.has(personOf(identity)));
}

/** The starter's names (a document stored before they were kept: its one `startedBy`). */
export function starterOf(approval: ApprovalStatus, startedBy: string | undefined): string[] {
  return approval.starter ?? (startedBy === undefined ? [] : [startedBy]);
}

/** A decision maker's names (a decision recorded before they were kept: its one `by`). */
export function deciderOf(decision: ApprovalDecisionRecord): string[] {
  return decision.identities ?? [decision.by];
}

/** How many distinct callers approved: decisions that share a name, directly or through others, count once. */
export function distinctApprovals(decisions: readonly ApprovalDecisionRecord[]): number {
  let callers: Set<string>[] = [];
  for (const decision of decisions.filter((made) => made.approved)) {
    const persons = new Set(deciderOf(decision).map(personOf));
    const joined = callers.filter((known) => [...persons].some((person) => known.has(person)));
    callers = [...callers.filter((known) => !joined.includes(known)), new Set([...persons, ...joined.flatMap((known) => [...known])])];
  }
  return callers.length;
}
