// The enums of the operators area, defined once (the document, the SQL checks and the docs follow).

/** The operator roles (docs/operators.md#roles). */
export const OPERATOR_ROLES = ['support', 'finance', 'disputes', 'admin'] as const;
export type OperatorRole = typeof OPERATOR_ROLES[number];
