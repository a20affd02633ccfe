/** `GET health`: the one anonymous route (DESIGN.md section 1). */
import { app } from '@azure/functions';
import { checkHealth } from '../src/health';
import { jsonResponse } from '../src/http/responses';
import { correlationIdOf } from '../src/http/correlation';
import { getServices } from '../src/services';
import { appVersion } from '../src/version';

app.http('health', {
  methods: ['GET'],
  route: 'health',
  authLevel: 'anonymous',
  handler: async (request) => {
    const report = await checkHealth(getServices(), appVersion);
    return jsonResponse(report.status === 'Healthy' ? 200 : 503, report, correlationIdOf(request.headers));
  },
});
