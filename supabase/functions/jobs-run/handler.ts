import { endpoint } from '../../../shared/endpoint.ts';
import { runJobs, verifyJobsSecret } from '../../../shared/jobs.ts';
import { jobsRunBody } from '../../../shared/schemas/escrow.ts';

// Called by the scheduler (pg_cron + pg_net in production) with the x-jobs-secret header.
export default endpoint({
  name: 'jobs-run',
  method: 'POST',
  auth: 'none',
  verify: verifyJobsSecret,
  body: jobsRunBody,
  handler: ({ body }) => runJobs(body.now ?? new Date()),
});
