/** The app's chained context reads, sets and removes values as the API's context does. */
import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { ChainedContext } from '../../../src/telemetry/chainedContext';

const first = createContextKey('first');
const second = createContextKey('second');

it('reads the nearest value of a key, then the context it was chained to', () => {
  const base = ROOT_CONTEXT.setValue(first, 'from the API context');
  const chained = new ChainedContext(base, second, 'two');
  const over = chained.setValue(second, 'three');
  expect(chained.getValue(first)).toBe('from the API context');
  expect(chained.getValue(second)).toBe('two');
  expect(over.getValue(second)).toBe('three');
  expect(over.getValue(createContextKey('other'))).toBeUndefined();
});

it('leaves the context it came from unchanged, and removes a value for its own chain only', () => {
  const chained = new ChainedContext(ROOT_CONTEXT, first, 'one');
  const removed = chained.deleteValue(first);
  expect(removed.getValue(first)).toBeUndefined();
  expect(chained.getValue(first)).toBe('one');
  expect(removed.setValue(first, 'again').getValue(first)).toBe('again');
});
