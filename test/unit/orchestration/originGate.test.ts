/** The gate per receiver's origin: a few attempts at once, and a circuit that skips one failing. */
import { OriginGate } from '../../../src/notifications/originGate';

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

it('says when an attempt opened the circuit, and follows the app-wide record: held open, a probe given, closed', () => {
  const origins = gate();
  const results = [1, 2, 3, 4].map(() => {
    origins.enter(origin);
    return origins.leave(origin, 'unanswered');
  });
  // Only the attempt that reached the bound opened it.
  expect(results).toEqual([undefined, undefined, 'opened', undefined]);

  // Held by the record: no probe from here, even past the next probe time.
  origins.hold(origin, now + 1000);
  now += 120_000;
  expect(origins.check(origin)).toEqual({ kind: 'open', until: now - 119_000 });
  expect(origins.openByRecord(origin)).toBe(true);
  // Released (storage could not say): its own timing again, a probe once the time passed.
  origins.release();
  expect(origins.check(origin)).toEqual({ kind: 'go' });

  // The record gives this instance the probe: one attempt, not two.
  origins.hold(origin, now + 60_000);
  origins.probe(origin);
  expect([origins.enter(origin), origins.enter(origin)]).toEqual([true, false]);
  origins.leave(origin, 'unanswered');
  expect(origins.isOpen(origin)).toBe(true);

  // The record is gone: closed, the count of failures in a row started again.
  origins.close(origin);
  expect(origins.isOpen(origin)).toBe(false);
  expect(origins.openByRecord(origin)).toBe(false);
  expect([origins.enter(origin), origins.enter(origin)]).toEqual([true, true]);
});
