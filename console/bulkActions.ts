/**
 * The orchestrations view's bulk actions: terminate the running ones, or restart the ended ones,
 * that the current filters match (`POST orchestrations/terminate|restart?<filters>`). A dry run
 * first counts what would be acted on, and the confirmation says that number; the action then
 * goes batch by batch, and what it did is announced (the ones refused, with the first reason).
 */
import { ApiError, currentSession } from './api';
import { confirmAction } from './confirmDialog';
import { announce, h } from './dom';
import { bulkOf, type BulkAction } from './orchestrationData';
import { filter } from './orchestrationFilters';

const words: Record<BulkAction, { button: string; verb: string; which: string; after: string }> = {
  terminate: {
    button: 'Terminate matching',
    verb: 'Terminate',
    which: 'running (Pending or Running)',
    after: 'The app stops tracking them; the upstream operations are not cancelled.',
  },
  restart: {
    button: 'Restart matching',
    verb: 'Restart',
    which: 'ended (Completed, Failed or Terminated)',
    after: 'Each request is sent again as a new orchestration, under your rights as they are now.',
  },
};

const messageOf = (error: unknown) => (error instanceof ApiError ? `${error.code}: ${error.message}` : String(error));

async function run(action: BulkAction, done: () => void): Promise<void> {
  const text = words[action];
  try {
    const dryRun = await bulkOf(action, filter, true);
    const count = dryRun.answers.reduce((sum, answer) => sum + answer.count, 0);
    if (count === 0) return announce(`No ${text.which} orchestration you may act on matches the filters.`);
    const question = `${text.verb} the ${count}${dryRun.complete ? '' : ' or more'} ${text.which} orchestrations the filters match? ${text.after}`;
    if (!(await confirmAction(question, `${text.verb} ${count}${dryRun.complete ? '' : '+'}`))) return;
    const { answers } = await bulkOf(action, filter, false);
    const results = answers.flatMap((answer) => answer.results ?? []);
    const refused = results.filter((result) => result.status >= 400);
    const first = refused[0]?.error;
    announce(
      `${text.verb}: ${results.length - refused.length} of ${results.length} done${refused.length ? `; ${refused.length} refused (${first ? `${first.code}: ${first.message}` : 'see each one'})` : ''}.`,
      refused.length ? 'error' : 'info',
    );
    done();
  } catch (error) {
    announce(messageOf(error), 'error');
  }
}

/** The buttons the caller's session allows (none without the routes' rights). */
export function bulkButtons(done: () => void): HTMLElement | null {
  const may = currentSession()?.may;
  const actions = (['terminate', 'restart'] as const).filter((action) => (action === 'terminate' ? may?.terminateMany : may?.restartMany));
  if (actions.length === 0) return null;
  return h(
    'span',
    { class: 'bulk-actions', role: 'group', 'aria-label': 'Act on every orchestration the filters match' },
    ...actions.map((action) =>
      h('button', { type: 'button', class: 'danger', 'data-bulk': action, onclick: () => void run(action, done) }, `${words[action].button}…`),
    ),
  );
}
