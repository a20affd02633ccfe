/**
 * One orchestration: its status document, the timeline of its polls, its notification
 * deliveries, links to the upstream resource, and the actions the caller may take (terminate
 * while it runs, restart or purge once ended, each after a confirmation; a restart opens the new
 * orchestration).
 */
import { ApiError, call, type Session } from './api';
import { confirmAction } from './confirmDialog';
import { announce, duration, h, replace, statusBadge, time, type Child } from './dom';
import { endOf, isActive as active, lastUpstreamError, statusDocumentOf, type StatusDocument } from './orchestrationData';
import { portalLinkOf, resourceOf, type ResourceRef } from './resource';

export function orchestrationView(container: HTMLElement, id: string, session: Session): () => void {
  const show = async () => {
    try {
      draw(await statusDocumentOf(id));
    } catch (error) {
      replace(
        container,
        h('h1', {}, 'Orchestration'),
        h('p', { class: 'error', role: 'alert' }, error instanceof ApiError ? `${error.code}: ${error.message}` : String(error)),
        h('p', {}, h('a', { href: '#/orchestrations' }, 'Back to the list')),
      );
    }
  };

  const act = async (question: string, label: string, run: () => Promise<unknown>, done: string) => {
    if (!(await confirmAction(question, label))) return;
    try {
      await run();
      announce(done);
    } catch (error) {
      announce(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error), 'error');
    }
  };

  function actions(document: StatusDocument): HTMLElement | null {
    const buttons: HTMLElement[] = [];
    if (session.may.terminate && active(document)) {
      buttons.push(
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () =>
              void act(
                `Terminate orchestration ${id}? The app stops tracking it; the upstream operation is not cancelled.`,
                'Terminate',
                () =>
                  call(`orchestrations/${encodeURIComponent(id)}/terminate?reason=${encodeURIComponent('Terminated from the console.')}`, { method: 'POST' }),
                'Terminated.',
              ).then(show),
          },
          'Terminate',
        ),
      );
    }
    if (session.may.restart && !active(document)) {
      const restart = async () => {
        const answer = await call(`orchestrations/${encodeURIComponent(id)}/restart`, { method: 'POST' });
        const newId = answer.headers.get('x-orchestration-id');
        if (newId && container.isConnected) location.hash = `#/orchestrations/${encodeURIComponent(newId)}`;
      };
      buttons.push(
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              void act(
                `Restart orchestration ${id}? Its request is sent again as a new orchestration, under your rights as they are now.`,
                'Restart',
                restart,
                'Restarted.',
              ),
          },
          'Restart',
        ),
      );
    }
    if (session.may.purge && !active(document)) {
      buttons.push(
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () =>
              void act(
                `Purge orchestration ${id}? Its document is deleted for good.`,
                'Purge',
                () => call(`orchestrations/${encodeURIComponent(id)}`, { method: 'DELETE' }),
                'Purged.',
              ).then(() => {
                if (!container.isConnected) return;
                location.hash = '#/orchestrations';
              }),
          },
          'Purge',
        ),
      );
    }
    return buttons.length ? h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' }, ...buttons) : null;
  }

  function draw(document: StatusDocument) {
    const path = document.input?.path;
    const resource = path ? resourceOf(path) : undefined;
    const portalLink = resource && portalLinkOf(resource);
    const upstreamError = lastUpstreamError(document);
    replace(
      container,
      h('p', {}, h('a', { href: '#/orchestrations' }, 'Back to the list')),
      h('h1', {}, 'Orchestration ', h('span', { class: 'mono' }, document.id), ' ', statusBadge(document.runtimeStatus)),
      actions(document),
      h(
        'dl',
        { class: 'facts' },
        ...fact('Name', document.name),
        ...fact('Created', time(document.createdTime)),
        ...fact('Last updated', time(document.lastUpdatedTime)),
        ...fact('Duration', duration(document.createdTime, endOf(document))),
        ...fact('Started by', document.startedBy ?? '-'),
        ...fact('Target resource', resource ? targetOf(resource) : '-'),
        ...fact('Last upstream error', upstreamError ? h('span', { class: 'upstream-error wrap' }, upstreamError) : '-'),
        ...(document.restartedFrom ? fact('Restart of', orchestrationLink(document.restartedFrom)) : []),
        ...(document.restartedAs ? fact('Restarted as', orchestrationLink(document.restartedAs)) : []),
      ),
      portalLink ? h('p', {}, h('a', { href: portalLink, rel: 'noopener noreferrer', target: '_blank' }, 'Open the resource in the Azure portal')) : null,
      h('h2', {}, 'Polls'),
      timeline(document),
      h('h2', {}, 'Notification deliveries'),
      deliveries(document),
      h('h2', {}, 'Status document'),
      h('pre', { class: 'document', tabindex: 0, 'aria-label': 'The status document as JSON' }, JSON.stringify(document, null, 2)),
    );
  }

  void show();
  return () => undefined;
}

const orchestrationLink = (other: string) => h('a', { href: `#/orchestrations/${encodeURIComponent(other)}`, class: 'mono' }, other);

function fact(term: string, value: Child): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, value)];
}

/** The resource's name and group, then its whole path. */
function targetOf(resource: ResourceRef): HTMLElement {
  return h(
    'span',
    {},
    h('span', { class: 'resource-name mono' }, resource.name),
    resource.group ? ` in resource group ${resource.group}` : '',
    h('br'),
    h('span', { class: 'mono wrap' }, `/${resource.path.replace(/^\/+/, '')}`),
  );
}

/** What the document keeps of its polls: the start, the last read and its answer, the next one due, the deadline, the end. */
function timeline(document: StatusDocument): HTMLElement {
  const status = document.customStatus;
  const items: HTMLElement[] = [h('li', {}, time(document.createdTime), ' started')];
  if (document.pollCount > 0 || status?.lastPolledTime) {
    items.push(
      h(
        'li',
        {},
        time(status?.lastPolledTime ?? document.lastUpdatedTime),
        ` poll ${document.pollCount}: answered ${status?.lastReadStatus ?? '-'}, upstream state ${status?.upstreamState ?? '-'}`,
        status?.message ? h('span', { class: 'wrap' }, ` (${status.message})`) : null,
      ),
    );
  }
  if (document.nextPollTime) items.push(h('li', {}, time(document.nextPollTime), ' next poll due'));
  if (document.deadlineTime && active(document)) items.push(h('li', {}, time(document.deadlineTime), ' deadline'));
  if (document.endedTime)
    items.push(
      h(
        'li',
        {},
        time(document.endedTime),
        ` ended ${document.runtimeStatus}`,
        document.failure ? h('span', { class: 'wrap' }, ` (${document.failure.code}: ${document.failure.message})`) : null,
      ),
    );
  return h('ol', { class: 'timeline' }, ...items);
}

function deliveries(document: StatusDocument): HTMLElement {
  if (document.notifications.length === 0) return h('p', {}, 'No notification was asked for (x-gateway-notify).');
  return h(
    'table',
    { class: 'deliveries' },
    h(
      'thead',
      {},
      h('tr', {}, ...['Target origin', 'State', 'Attempts', 'Next attempt', 'Last error', 'Delivered'].map((column) => h('th', { scope: 'col' }, column))),
    ),
    h(
      'tbody',
      {},
      ...document.notifications.map((delivery) =>
        h(
          'tr',
          {},
          h('td', { class: 'mono' }, delivery.targetOrigin),
          h('td', {}, delivery.state),
          h('td', {}, delivery.attempts),
          h('td', {}, time(delivery.nextAttemptTime)),
          h('td', { class: 'wrap' }, delivery.lastError ?? '-'),
          h('td', {}, time(delivery.deliveredTime)),
        ),
      ),
    ),
  );
}
