/**
 * The checks of a request and of its answer, in the order and with the messages of the Python
 * side (its README's "Errors" table), so a request is refused alike in both languages and an
 * answer that breaks the rules never reaches the caller.
 *
 * @module
 */

import { ErrorCode, UserQuestionError } from "./errors.js";
import { schemaProblem, schemaTexts, valueProblem } from "./forms.js";
import {
  MAX_ANSWER_NOTE_LENGTH,
  MAX_CUSTOM_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_DETAIL_LENGTH,
  MAX_FORM_FIELDS,
  MAX_HEADER_LENGTH,
  MAX_LABEL_LENGTH,
  MAX_OPTIONS_PER_QUESTION,
  MAX_QUESTION_ID_LENGTH,
  MAX_QUESTION_LENGTH,
  MAX_QUESTIONS_PER_REQUEST,
} from "./limits.js";
import { listOf, readValue, SchemaProblem } from "./schema.js";
import { characters, longerThan, quoted, textProblem } from "./text.js";
import type { AskUserQuestionAnswer, AskUserQuestionAnswerItem, AskUserQuestionItem } from "./wire.generated.js";

/**
 * Read questions given by a caller (a JavaScript caller may pass anything): a checked copy with
 * only the vocabulary's fields.
 *
 * @throws {UserQuestionError} `BAD_REQUEST`, naming the property: `invalid request: missing
 *   required property "questions[0].id"`.
 */
export function readQuestions(questions: unknown): AskUserQuestionItem[] {
  try {
    const read = readValue({ questions }, listOf("questions", "AskUserQuestionItem"), "");
    return (read as { questions: AskUserQuestionItem[] }).questions;
  } catch (error) {
    if (error instanceof SchemaProblem) {
      throw new UserQuestionError(`invalid request: ${error.message}`, ErrorCode.BAD_REQUEST);
    }
    throw error;
  }
}

/**
 * The request checks after the abort signal's: no questions (`EMPTY_QUESTIONS`), an intent whose
 * approve label names no option or that has no detail (`BAD_INTENT`), a repeated question id or
 * option label (`BAD_QUESTION`), then the limits (`TOO_MANY_QUESTIONS`, `LIMIT_EXCEEDED`, and
 * `BAD_QUESTION` for a text holding a NUL or a lone surrogate).
 */
export function checkRequest(questions: readonly AskUserQuestionItem[]): void {
  if (questions.length === 0) {
    throw new UserQuestionError("ask_user_question requires at least one question", ErrorCode.EMPTY_QUESTIONS);
  }
  for (const question of questions) {
    const intent = question.intent;
    if (intent === undefined) continue;
    if (!(question.options ?? []).some((option) => option.label === intent.approve)) {
      throw new UserQuestionError(
        `question ${question.id} declares intent ${intent.kind} whose approve label ` +
          `${quoted(intent.approve)} names none of its options`,
        ErrorCode.BAD_INTENT,
      );
    }
    if (question.detail === undefined) {
      throw new UserQuestionError(
        `question ${question.id} declares intent ${intent.kind} without the detail it reviews`,
        ErrorCode.BAD_INTENT,
      );
    }
  }
  const ids = new Set<string>();
  for (const question of questions) {
    if (ids.has(question.id)) {
      throw new UserQuestionError(
        `question id ${quoted(question.id)} appears more than once; ids must be unique within a request`,
        ErrorCode.BAD_QUESTION,
      );
    }
    ids.add(question.id);
    const labels = new Set<string>();
    for (const option of question.options ?? []) {
      if (labels.has(option.label)) {
        throw new UserQuestionError(
          `question ${question.id} offers the option label ${quoted(option.label)} more than once`,
          ErrorCode.BAD_QUESTION,
        );
      }
      labels.add(option.label);
    }
  }
  checkLimits(questions);
  for (const question of questions) {
    if (question.schema === undefined) continue;
    if ((question.options ?? []).length > 0) {
      throw new UserQuestionError(
        `question ${question.id} has both options and a schema; a question has options, a schema, or neither`,
        ErrorCode.BAD_QUESTION,
      );
    }
    const problem = schemaProblem(question.schema);
    if (problem !== undefined) {
      throw new UserQuestionError(
        `question ${question.id} asks for a form this package cannot ask: ${problem}`,
        ErrorCode.BAD_QUESTION,
      );
    }
  }
}

/** Check 7: the sizes of the limits, and text without NUL or lone surrogates. */
export function checkLimits(questions: readonly AskUserQuestionItem[]): void {
  if (questions.length > MAX_QUESTIONS_PER_REQUEST) {
    throw new UserQuestionError(
      `a request holds at most ${MAX_QUESTIONS_PER_REQUEST} questions, got ${questions.length}`,
      ErrorCode.TOO_MANY_QUESTIONS,
    );
  }
  questions.forEach((question, index) => {
    const options = question.options ?? [];
    if (options.length > MAX_OPTIONS_PER_QUESTION) {
      throw new UserQuestionError(
        `property "questions[${index}].options" holds ${options.length} options; ` +
          `at most ${MAX_OPTIONS_PER_QUESTION} are allowed`,
        ErrorCode.LIMIT_EXCEEDED,
      );
    }
    const properties = question.schema?.properties;
    const fields = typeof properties === "object" && properties !== null ? Object.keys(properties).length : 0;
    if (fields > MAX_FORM_FIELDS) {
      throw new UserQuestionError(
        `property "questions[${index}].schema.properties" holds ${fields} fields; ` +
          `at most ${MAX_FORM_FIELDS} are allowed`,
        ErrorCode.LIMIT_EXCEEDED,
      );
    }
    for (const [name, text, limit] of texts(question)) {
      checkText(`questions[${index}].${name}`, text, limit, ErrorCode.BAD_QUESTION);
    }
  });
}

function checkText(path: string, text: string, limit: number, code: string): void {
  if (longerThan(text, limit)) {
    throw new UserQuestionError(
      `property "${path}" is ${characters(text)} characters long; at most ${limit} are allowed`,
      ErrorCode.LIMIT_EXCEEDED,
    );
  }
  const problem = textProblem(text);
  if (problem !== undefined) throw new UserQuestionError(`property "${path}" ${problem}`, code);
}

function* texts(question: AskUserQuestionItem): Generator<[string, string, number]> {
  yield ["id", question.id, MAX_QUESTION_ID_LENGTH];
  if (question.header !== undefined) yield ["header", question.header, MAX_HEADER_LENGTH];
  yield ["question", question.question, MAX_QUESTION_LENGTH];
  if (question.detail !== undefined) yield ["detail", question.detail, MAX_DETAIL_LENGTH];
  let index = 0;
  for (const option of question.options ?? []) {
    yield [`options[${index}].label`, option.label, MAX_LABEL_LENGTH];
    if (option.description !== undefined) {
      yield [`options[${index}].description`, option.description, MAX_DESCRIPTION_LENGTH];
    }
    index += 1;
  }
  if (question.intent !== undefined) yield ["intent.approve", question.intent.approve, MAX_LABEL_LENGTH];
  if (typeof question.schema === "object" && question.schema !== null) {
    yield* schemaTexts(question.schema as unknown as Record<string, unknown>);
  }
}

function badAnswer(problem: string): UserQuestionError {
  return new UserQuestionError(`provider answer ${problem}`, ErrorCode.BAD_ANSWER);
}

/**
 * Check an answer against its questions, as the Python service checks every provider's answer:
 * one item per question (no unknown id, none twice, none missing), each label one of its
 * question's options and none twice, a single-select question with at most one label and not
 * both a label and custom text, custom text never blank, at most 100,000 characters and without
 * NUL or lone surrogate, nothing selected on a question without options.
 *
 * @returns the answer with its items in question order and a multi-select's labels in option
 *   order; custom text is kept as typed.
 * @throws {UserQuestionError} `BAD_ANSWER`, naming the question and what is wrong.
 */
export function checkAnswer(questions: readonly AskUserQuestionItem[], answer: unknown): AskUserQuestionAnswer {
  let read: AskUserQuestionAnswer;
  try {
    read = readValue(answer, { $ref: "#/$defs/AskUserQuestionAnswer" }, "") as AskUserQuestionAnswer;
  } catch (error) {
    if (error instanceof SchemaProblem) {
      throw new UserQuestionError(`invalid answer: ${error.message}`, ErrorCode.BAD_ANSWER);
    }
    throw error;
  }
  const known = new Set(questions.map((question) => question.id));
  const byId = new Map<string, AskUserQuestionAnswerItem>();
  for (const item of read.answers) {
    if (!known.has(item.id)) throw badAnswer(`for question ${quoted(item.id)}: no such question in the request`);
    if (byId.has(item.id)) throw badAnswer(`for question ${item.id}: answered more than once`);
    byId.set(item.id, item);
  }
  const answers = questions.map((question) => {
    const found = byId.get(question.id);
    if (found === undefined) throw badAnswer(`for question ${question.id}: missing; answer every question once`);
    return checkItem(question, found);
  });
  return { answers };
}

function checkItem(question: AskUserQuestionItem, item: AskUserQuestionAnswerItem): AskUserQuestionAnswerItem {
  const { selected, custom } = item;
  const options = question.options ?? [];
  const where = `for question ${question.id}`;
  checkTyped(where, "custom text", custom, MAX_CUSTOM_LENGTH);
  checkTyped(where, "note", item.note, MAX_ANSWER_NOTE_LENGTH);
  if (question.schema === undefined) {
    if (item.value !== undefined) throw badAnswer(`${where}: the question asks for no form, so it takes no value`);
  } else {
    if (custom !== undefined) throw badAnswer(`${where}: a form is answered with its value, not custom text`);
    const problem = item.value === undefined ? undefined : valueProblem(question.schema, item.value);
    if (problem !== undefined) throw badAnswer(`${where}: ${problem}`);
  }
  // This client never sends an approval with its asks, so no answer to one may change a call.
  if (item.edited !== undefined) throw badAnswer(`${where}: edited goes with an approval card only`);
  if (selected.length > 0) {
    if (options.length === 0) throw badAnswer(`${where}: the question has no options, so nothing can be selected`);
    if (question.multiSelect !== true) {
      if (selected.length > 1) {
        throw badAnswer(`${where}: a single-select question takes one label, got ${selected.length}`);
      }
      if (custom !== undefined) throw badAnswer(`${where}: a single-select answer has both a label and custom text`);
    }
  }
  const positions = new Map(options.map((option, position) => [option.label, position]));
  const seen = new Set<string>();
  for (const label of selected) {
    if (!positions.has(label)) throw badAnswer(`${where}: ${quoted(label)} is not one of its options`);
    if (seen.has(label)) throw badAnswer(`${where}: ${quoted(label)} is selected more than once`);
    seen.add(label);
  }
  const ordered = [...selected].sort((a, b) => positions.get(a)! - positions.get(b)!);
  const checked: AskUserQuestionAnswerItem = { id: item.id, selected: ordered };
  if (custom !== undefined) checked.custom = custom;
  if (item.note !== undefined) checked.note = item.note;
  if (item.value !== undefined) checked.value = item.value;
  return checked;
}

/** Text a person typed (custom text, a note): not blank, within `limit`, text only. */
function checkTyped(where: string, what: string, text: string | undefined, limit: number): void {
  if (text === undefined) return;
  if (text.trim() === "") throw badAnswer(`${where}: ${what} is blank; omit ${what === "custom text" ? "custom" : what} instead`);
  if (longerThan(text, limit)) {
    throw badAnswer(`${where}: ${what} is ${characters(text)} characters long; at most ${limit} are allowed`);
  }
  const problem = textProblem(text);
  if (problem !== undefined) throw badAnswer(`${where}: ${what} ${problem}`);
}
