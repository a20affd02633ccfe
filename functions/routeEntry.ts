import type { HttpHandler, HttpMethod } from '@azure/functions';

/** One HTTP function of the app, as app.http takes it: its name, path, methods, auth level and handler. */
export interface RouteEntry {
  name: string;
  route: string;
  methods: HttpMethod[];
  authLevel: 'function' | 'anonymous';
  handler: HttpHandler;
}
