/** The gate per receiver's origin: a few attempts at once, and a circuit that skips one failing. */
import { OriginGate } from '../../../src/orchestration/originGate';

const origin = 'https://hooks.example.com';
let now = 1_000_000;
const gate = () => new OriginGate({ perOriginConcurrency: 2, failuresToOpen: 3, coolDownMs: 60_000 }, () => now);

it('lets a few attempts to one origin at once, and any number to others', () => {
  const origins = gate();
  expect([origins.enter(origin), origins.enter(origin), origins.enter(origin)]).toEqual([true, true, false]);
  expect(origins.check(origin)).toEqual({ kind: 'busy' });
  expect(origins.enter('https://other.example.com')).toBe(true);
  origins.leave(origin, 'answered');
  expect(origins.enter(origin)).toBe(true);
});

it('opens after failures in a row, probes once after the cool-down, and closes on an answer', () => {
  const origins = gate();
  for (const result of ['unanswered', 'unanswered', 'answered', 'unanswered', 'unanswered'] as const) {
    origins.enter(origin);
    origins.leave(origin, result);
  }
  // An answer reset the count: two failures in a row so far.
  expect(origins.check(origin)).toEqual({ kind: 'go' });
  origins.enter(origin);
  origins.leave(origin, 'unanswered');
  expect(origins.check(origin)).toEqual({ kind: 'open', until: now + 60_000 });
  expect(origins.enter(origin)).toBe(false);

  now += 60_000;
  expect([origins.enter(origin), origins.enter(origin)]).toEqual([true, false]);
  origins.leave(origin, 'unanswered');
  expect(origins.check(origin)).toEqual({ kind: 'open', until: now + 60_000 });

  now += 60_000;
  origins.enter(origin);
  origins.leave(origin, 'answered');
  expect([origins.enter(origin), origins.enter(origin)]).toEqual([true, true]);
});

it('counts an attempt never made neither way', () => {
  const origins = gate();
  for (let index = 0; index < 5; index += 1) {
    origins.enter(origin);
    origins.leave(origin, 'unused');
  }
  expect(origins.check(origin)).toEqual({ kind: 'go' });
});
