/**
 * A context holding one value over its parent's, rather than a copy of them all: the API's own
 * context copies its whole map on every `setValue`, and a traced call sets values on each span
 * it opens. Lookups walk the chain, as deep as the spans and operations a piece of work is
 * nested in (a handful).
 */
import type { Context } from '@opentelemetry/api';

const removed = Symbol('removed');

export class ChainedContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly key: symbol,
    private readonly value: unknown,
  ) {}

  getValue(key: symbol): unknown {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk starts here
    let at: Context = this;
    while (at instanceof ChainedContext) {
      if (at.key === key) return at.value === removed ? undefined : at.value;
      at = at.parent;
    }
    return at.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return new ChainedContext(this, key, value);
  }

  deleteValue(key: symbol): Context {
    return new ChainedContext(this, key, removed);
  }
}
