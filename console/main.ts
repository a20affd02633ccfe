/**
 * The operator console's entry: sign-in (a function key pasted once, kept in sessionStorage),
 * the navigation, and the views by the location's hash (`#/orchestrations`,
 * `#/orchestrations/<id>`, `#/approvals`, `#/approvals/<id>`, `#/certificates`, `#/health`), so
 * no key or data is ever in a URL.
 */
import { ApiError, forgetKey, loadSession, storedKey, storeKey, type Session } from './api';
import { approvalsView } from './approvalsView';
import { certificatesView } from './certificatesView';
import { announce, h, replace } from './dom';
import { healthView } from './healthView';
import { orchestrationsView } from './orchestrationsView';
import { orchestrationView } from './orchestrationView';

const view = document.getElementById('view') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
const signOut = document.getElementById('sign-out') as HTMLButtonElement;
let leave: () => void = () => undefined;
let session: Session | undefined;

function signInForm(problem?: string): void {
  leave();
  who.textContent = '';
  signOut.hidden = true;
  const input = h('input', { id: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'key-help' });
  const form = h(
    'form',
    {
      class: 'sign-in',
      onsubmit: (event) => {
        event.preventDefault();
        storeKey(input.value.trim());
        void start();
      },
    },
    h('h1', {}, 'Sign in'),
    problem ? h('p', { class: 'error', role: 'alert' }, problem) : null,
    h('label', { for: 'key' }, 'Function key'),
    input,
    h(
      'p',
      { id: 'key-help', class: 'help' },
      'Paste a function key of this app. It is kept in this tab only (sessionStorage) and sent as the x-functions-key header, never in a URL. Where keys are not checked (a local run without LOCAL_HOST_KEYS), leave it empty.',
    ),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  replace(view, form);
  input.focus();
}

/** A link's id as typed; a `%` that starts no escape (a hand-made or mangled link) is taken as it is, not a script error. */
function idOf(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

function route(): void {
  if (!session) return;
  leave();
  // `#approval=<id>` is read as `#/approvals/<id>`.
  const [, area = 'orchestrations', id] = location.hash
    .replace(/^#approval=/, '#/approvals/')
    .replace(/^#/, '')
    .split('/');
  for (const link of document.querySelectorAll('nav.main a')) {
    if (link.getAttribute('href') === `#/${area}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // Each view draws into a pane of its own: an answer that comes after the user moved on lands
  // in a pane no longer shown, never over the next view.
  const pane = document.createElement('div');
  view.replaceChildren(pane);
  if (area === 'orchestrations' && id) leave = orchestrationView(pane, idOf(id), session);
  else if (area === 'approvals') leave = approvalsView(pane, session, id ? idOf(id) : undefined);
  else if (area === 'certificates') leave = certificatesView(pane, session);
  else if (area === 'health') leave = healthView(pane);
  else leave = orchestrationsView(pane, session.list);
  view.focus();
}

async function start(): Promise<void> {
  if (storedKey() === null) return signInForm();
  try {
    session = await loadSession();
  } catch (error) {
    forgetKey();
    return signInForm(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error));
  }
  who.textContent = `Signed in as ${session.caller}${session.may.terminate || session.may.purge || session.may.approve ? '' : ' (read only)'}`;
  signOut.hidden = false;
  route();
}

signOut.addEventListener('click', () => {
  forgetKey();
  session = undefined;
  announce('Signed out.');
  signInForm();
});
window.addEventListener('hashchange', route);
void start();
