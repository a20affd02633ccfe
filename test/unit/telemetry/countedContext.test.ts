/**
 * The async context let go of when no work within it is in flight (where holding it runs a hook
 * for every promise): the work still sees its context, nested work keeps it held, and a failure
 * is the caller's as it was.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { build } from 'esbuild';
import { contextRunsHooks, CountedContextManager } from '../../../src/telemetry/countedContext';

const key = createContextKey('test');
const contextOf = (value: string) => ROOT_CONTEXT.setValue(key, value);
const tick = () => new Promise((resolve) => setImmediate(resolve));

function manager(): { counted: CountedContextManager; disabled: () => number } {
  const counted = new CountedContextManager(true);
  counted.enable();
  const disable = jest.spyOn(counted, 'disable');
  return { counted, disabled: () => disable.mock.calls.length };
}

it('knows which runtimes carry the context by hook (Node 20 and 22 unless told otherwise)', () => {
  const major = Number(process.versions.node.split('.')[0]);
  const frameAsked = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((option) => option.includes('--experimental-async-context-frame'));
  expect(contextRunsHooks()).toBe(major < 24 && !frameAsked);
});

it('lets the context go once the last work within it settles, and takes it again for the next', async () => {
  const { counted, disabled } = manager();
  const seen: unknown[] = [];
  const outer = counted.with(contextOf('outer'), async () => {
    await tick();
    await counted.with(contextOf('inner'), async () => {
      await tick();
      seen.push(counted.active().getValue(key));
    });
    // The inner work settled, the outer is still in flight: the context is held.
    expect(disabled()).toBe(0);
    seen.push(counted.active().getValue(key));
  });
  expect(counted.open).toBe(1);
  await outer;
  await tick();
  expect(seen).toEqual(['inner', 'outer']);
  expect(counted.open).toBe(0);
  expect(disabled()).toBe(1);
  expect(counted.active()).toBe(ROOT_CONTEXT);
  // Taken again: the next work sees its own context.
  await counted.with(contextOf('again'), async () => {
    await tick();
    expect(counted.active().getValue(key)).toBe('again');
  });
  await tick();
  expect(disabled()).toBe(2);
});

it('counts work that returns at once, throws or rejects, and leaves the failure to the caller', async () => {
  const { counted, disabled } = manager();
  expect(counted.with(contextOf('sync'), () => counted.active().getValue(key))).toBe('sync');
  expect(() =>
    counted.with(contextOf('throws'), () => {
      throw new Error('thrown');
    }),
  ).toThrow('thrown');
  await expect(
    counted.with(contextOf('rejects'), async () => {
      await tick();
      throw new Error('rejected');
    }),
  ).rejects.toThrow('rejected');
  await tick();
  expect(counted.open).toBe(0);
  expect(disabled()).toBe(3);
});

it('leaves a rejection nobody awaits reported as unhandled', async () => {
  // In a process of its own: jest takes unhandled rejections for itself.
  const { outputFiles } = await build({
    entryPoints: [resolve(__dirname, '../../../src/telemetry/countedContext.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
  });
  const program = `${outputFiles[0]!.text}
const counted = new module.exports.CountedContextManager(true);
counted.enable();
process.on('unhandledRejection', (reason) => { console.log('reported: ' + reason.message + ', open: ' + counted.open); process.exit(0); });
void counted.with(require('@opentelemetry/api').ROOT_CONTEXT, async () => { await null; throw new Error('nobody awaits this'); });
setTimeout(() => console.log('not reported'), 2000);`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], { cwd: resolve(__dirname, '../../..'), timeout: 30_000 });
  expect(stdout.trim()).toBe('reported: nobody awaits this, open: 0');
});

it('counts nothing where the context costs nothing to hold', async () => {
  const counted = new CountedContextManager(false);
  counted.enable();
  const disable = jest.spyOn(counted, 'disable');
  await counted.with(contextOf('frame'), async () => {
    await tick();
    expect(counted.active().getValue(key)).toBe('frame');
  });
  expect(counted.open).toBe(0);
  expect(disable).not.toHaveBeenCalled();
});
