/**
 * The spec documents' schemas as the catalogue's entries read them: each document's module is
 * loaded, and its schemas built, when an entry first asks for that document (catalogue.ts), so
 * a call builds the schemas of its own document and the shared ones, not all of them.
 */
import type * as ApiManagement from './apiManagement';
import type * as Authorization from './authorization';
import type * as Common from './common';
import type * as ContainerInstance from './containerInstance';
import type * as EventHub from './eventHub';
import type * as Lifecycle from './lifecycle';
import type * as ResourceHealth from './resourceHealth';

/* eslint-disable @typescript-eslint/no-require-imports */
export const specDocuments = {
  get apiManagement(): typeof ApiManagement {
    return require('./apiManagement');
  },
  get authorization(): typeof Authorization {
    return require('./authorization');
  },
  get common(): typeof Common {
    return require('./common');
  },
  get containerInstance(): typeof ContainerInstance {
    return require('./containerInstance');
  },
  get eventHub(): typeof EventHub {
    return require('./eventHub');
  },
  get lifecycle(): typeof Lifecycle {
    return require('./lifecycle');
  },
  get resourceHealth(): typeof ResourceHealth {
    return require('./resourceHealth');
  },
};
/* eslint-enable @typescript-eslint/no-require-imports */

export type SpecDocuments = typeof specDocuments;
