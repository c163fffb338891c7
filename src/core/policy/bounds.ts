/**
 * Bounds on a policy (contract section 11), so that compile and evaluation time and memory are
 * bounded whatever a client sends. A policy over any of them is refused with `policy_invalid`.
 */
export const POLICY_BOUNDS = {
  /** Custom rules in `rules`. */
  rulesMax: 100,
  /** Condition nodes (all/any/not and leaves) across all custom rules. */
  conditionsMax: 500,
  /** Nesting depth of a condition tree; the root all/any/not is depth 1. */
  depthMax: 10,
  /** Values in all lists of the policy together (MCCs, countries, `in` lists, template params). */
  listValuesMax: 10_000,
  /** Entries in `limits`. */
  limitsMax: 50,
  /** Entries in `templates`. */
  templatesMax: 20,
  /** Children of one all/any node. */
  childrenMax: 100,
  /** Characters in a rule name. */
  ruleNameLengthMax: 64,
  /** Characters in a decline message. */
  messageLengthMax: 200,
  /** Characters in a string constant of a condition. */
  stringValueLengthMax: 200,
  /** The largest count a count limit or integer fact comparison may name. */
  countMax: 1_000_000_000,
} as const;

/** Bounds on one template of the rule library (rules/*.json), checked when it is loaded. */
export const TEMPLATE_BOUNDS = {
  rulesMax: 10,
  limitsMax: 10,
  paramsMax: 10,
  descriptionLengthMax: 500,
} as const;
