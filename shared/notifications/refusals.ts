// The refusals of the notifications area: each code declared once (docs/errors.md lists them all).
import { refusal } from '../core/http.ts';

export const NOTIFICATION_NOT_FOUND = refusal<{ notification_id: string }>({
  code: 'notification_not_found',
  status: 404,
  when: "No notification of the caller's with this id",
  then: "Check the id; notification-list lists the caller's notifications",
  message: () => 'Notification not found',
  example: { notification_id: '9b1e4c2d-7a3f-4e58-b6d0-1c2a3e4f5a6b' },
});

/**
 * notification-read by escrow_id for an escrow the caller cannot see. Its own code here, so as not
 * to clash with the escrow area's code for an unknown escrow; the two may be merged into that one.
 */
export const NOTIFICATION_ESCROW_NOT_FOUND = refusal<{ escrow_id: string }>({
  code: 'notification_escrow_not_found',
  status: 404,
  when: 'Marking read by escrow_id: no escrow with this id that the caller is a party to',
  then: "Check the id; escrow-list lists the caller's escrows",
  message: () => 'Escrow not found',
  example: { escrow_id: '5d8c0e1a-2b3f-4a6d-9e7c-0f1a2b3c4d5e' },
});
