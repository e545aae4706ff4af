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
  description: 'Only the scheduler, with the jobs secret (every minute); `now` is accepted on the local stack only. ' +
    'Disputes get their reminder 24 hours before the negotiation deadline and, at it, are released to the payee ' +
    '(the payer raised it and took no part) or escalated; ended inspection periods are released as by ' +
    '`escrow-release`; escrows `released` or `refunded` 14 days ago are `ended`. Then unsent payouts go out, ' +
    "movements pending for 30 minutes are settled from the provider's answer, queued SMS are sent, " +
    'Idempotency-Keys older than 24 hours deleted, and outbound webhooks enqueued from the event log, sent when due ' +
    'and removed after 30 days; every step is safe to repeat.',
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
