// The refusal sentences several endpoints declare (`refusals` of endpoint({...}), rendered into the
// OpenAPI document), written once. An endpoint with its own refusal keeps its own sentence.
import type { LegacyRefusals } from '../core/endpoint.ts';

export const ESCROW_NOT_FOUND = 'No escrow with this id that the caller is a party to';
export const ESCROW_WRONG_PARTY = "The caller's role in this escrow cannot do this (e.g. the payee releasing)";
export const ESCROW_WRONG_STATE = "The escrow's state does not allow this now; the message says what comes first";

/** A party's transition of an escrow named by escrow_id: the wrong party, no such escrow, the wrong state. */
export const ESCROW_TRANSITION_REFUSALS = {
  403: ESCROW_WRONG_PARTY,
  404: ESCROW_NOT_FOUND,
  409: ESCROW_WRONG_STATE,
} as const satisfies LegacyRefusals;

/** The same, for the counterparty's answers that name the escrow by escrow_id or invite_token. */
export const ESCROW_INVITE_REFUSALS = {
  ...ESCROW_TRANSITION_REFUSALS,
  404: 'No escrow with this id or invite token that the caller is a party to',
} as const satisfies LegacyRefusals;
