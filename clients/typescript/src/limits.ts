/**
 * The sizes a request and an answer may have: the same numbers the host enforces, so a request
 * the host would refuse is refused here first, with the same code and message.
 *
 * Lengths count characters (Unicode code points), as the host does, not UTF-16 units.
 *
 * @module
 */

/** Questions in one request; more is `TOO_MANY_QUESTIONS`. */
export const MAX_QUESTIONS_PER_REQUEST = 32;
/** Options of one question; more is `LIMIT_EXCEEDED`. */
export const MAX_OPTIONS_PER_QUESTION = 64;
/** Characters in a question's `id`. */
export const MAX_QUESTION_ID_LENGTH = 256;
/** Characters in a question's `header`. */
export const MAX_HEADER_LENGTH = 1_000;
/** Characters in a question's `question`. */
export const MAX_QUESTION_LENGTH = 10_000;
/** Characters in a question's `detail` (a plan under review, above all). */
export const MAX_DETAIL_LENGTH = 100_000;
/** Characters in an option's `label` (and an intent's `approve`). */
export const MAX_LABEL_LENGTH = 1_000;
/** Characters in an option's `description`. */
export const MAX_DESCRIPTION_LENGTH = 10_000;
/** Characters in an answer's `custom` text, and in a text a form's value holds; more is `BAD_ANSWER`. */
export const MAX_CUSTOM_LENGTH = 100_000;
/** Characters in an answer's `note`, the remark beside a choice; more is `BAD_ANSWER`. */
export const MAX_ANSWER_NOTE_LENGTH = 4_000;
/** Characters in an answer's `edited` call, written as compact JSON; more is `BAD_ANSWER`. */
export const MAX_EDITED_LENGTH = 500_000;
/** Fields of one question's form (`schema.properties`); more is `LIMIT_EXCEEDED`. */
export const MAX_FORM_FIELDS = 64;
/** Characters in an rpcId or a session id. */
export const MAX_ID_LENGTH = 256;
/** Characters in an origin's `client`. */
export const MAX_ORIGIN_CLIENT = 128;
/** Characters in an origin's `cwd`. */
export const MAX_ORIGIN_CWD = 4096;
/** The largest frame a host takes, in UTF-8 bytes (1 MiB); a larger one closes the socket. */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** The largest frame accepted from the host (4 MiB). */
export const MAX_REPLY_BYTES = 4 * 1024 * 1024;
