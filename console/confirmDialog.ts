/** A modal confirmation (a native <dialog>: focus is held inside, Escape cancels). */
import { h } from './dom';

export function confirmAction(question: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-question' },
      h('p', { id: 'confirm-question' }, question),
      h(
        'div',
        { class: 'dialog-buttons' },
        h('button', { type: 'button', class: 'danger', onclick: () => close(true) }, confirmLabel),
        h('button', { type: 'button', autofocus: true, onclick: () => close(false) }, 'Cancel'),
      ),
    );
    const close = (confirmed: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(confirmed);
    };
    dialog.addEventListener('cancel', () => close(false));
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
