// The part of undici the app uses (Agent, and Dispatcher's request API), which tools/build.mjs
// bundles in place of the package for the app. undici's index.js loads every feature it has
// (fetch, WebSocket, EventSource, caches, mocks, interceptors): twice the code the Agent
// needs, and about a fifth of the app's load time on every cold start. These are
// undici's own modules: one that moves in a later undici fails the build, and the line below
// is what undici's index.js does to give every dispatcher request().
import Agent from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';

Object.assign(Dispatcher.prototype, api);

export { Agent, Dispatcher };
