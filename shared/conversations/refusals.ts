// The refusals of the conversations area: each code declared once (docs/errors.md lists them all).
// Too many messages is core's `rate_limited`.
import { refusal } from '../core/http.ts';

export const CONVERSATION_NOT_FOUND = refusal<{ conversation_id?: string }>({
  code: 'conversation_not_found',
  status: 404,
  when: 'No conversation with this id that the caller takes part in (or its escrow was deleted)',
  then: "Check the id; conversation-list lists the caller's conversations",
  message: () => 'Conversation not found',
  example: { conversation_id: '3f2c1a9e-8d4b-4c7a-9e61-2b5d7f0a4c13' },
});

export const CONVERSATION_READ_ONLY = refusal<{ conversation_id: string; escrow_status: string }>({
  code: 'conversation_read_only',
  status: 409,
  when: "The escrow's deal closed more than 30 days ago: its conversation is read-only",
  then: 'Do not offer to write in it; the feed stays readable',
  message: () => 'this conversation is read-only: the deal closed more than 30 days ago',
  example: { conversation_id: '3f2c1a9e-8d4b-4c7a-9e61-2b5d7f0a4c13', escrow_status: 'completed' },
});
