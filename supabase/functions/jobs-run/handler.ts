import { getConfig } from '../../../shared/core/config.ts';
import { endpoint } from '../../../shared/core/endpoint.ts';
import { VALIDATION_FAILED } from '../../../shared/core/refusals.ts';
import { JOBS_SECRET_HEADER, jobsRun, verifyJobsSecret } from '../../../shared/jobs/jobs.ts';
import { jobsRunBody, jobsRunResponse } from '../../../shared/jobs/schema.ts';

// Called by the scheduler (pg_cron + pg_net in production) with the x-jobs-secret header.
// `now` moves the job's clock: believed only on the local stack and in tests (docs/escrow.md, "The job"), so a
// leaked jobs secret cannot end an inspection early in a deployment.
export default endpoint({
  name: 'jobs-run',
  summary:
    'Runs the time-driven work (inspection periods, deadlines, payouts, reconciliation, queued SMS); called by the scheduler',
  description: 'Only the scheduler, with the jobs secret (every minute: pg_cron in production, `npm start` locally); ' +
    '`now` is accepted on the local stack only. At that time, disputes get their reminder 24 hours before the ' +
    'negotiation deadline and, at it, are released to the payee (the payer raised it and took no part) or ' +
    'escalated to the admins; escrows whose inspection period ended are released as by `escrow-release`; ' +
    '`released` and `refunded` escrows 14 days old are `ended`. Then it sends payouts never sent, settles from the ' +
    "provider's answer money movements pending for 30 minutes, sends queued SMS and deletes Idempotency-Keys older " +
    'than 24 hours; every step is safe to run twice or at once, and the answer counts what was done.',
  signedBy: JOBS_SECRET_HEADER,
  method: 'POST',
  auth: 'none',
  verify: verifyJobsSecret,
  body: jobsRunBody,
  response: jobsRunResponse,
  // the job's batches may take longer than a client's request is given
  deadline: false,
  handler: ({ body }) => {
    if (body.now !== undefined && !getConfig().local) {
      throw VALIDATION_FAILED.error({ part: 'body' }, {
        details: [{
          field: 'now',
          message: 'is accepted only on the local stack; a deployment runs the job at the current time',
        }],
      });
    }
    return jobsRun(body.now ?? new Date());
  },
});
