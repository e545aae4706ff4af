// The closed lists of values the conversations area stores or answers with, written once. Each equals the
// values its database column accepts (tests/integration/enums.test.ts); adding a value is
// docs/architecture.md#how-to-add.

/** What kind of message a party sent in a conversation (public.messages.message_type); text is the default. */
export const MESSAGE_TYPES = ['text'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
