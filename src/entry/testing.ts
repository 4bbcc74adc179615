// `maso/testing`: helpers for a workflow's own tests, never for training. A scripted caller
// answers role calls from a function, so a workflow walks (and its rewards run) without a model.
export { scriptedCaller, type ScriptedCaller } from "../workflow/scripted-caller.js";
