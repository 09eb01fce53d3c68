import type { Knowledge } from "../../../src/diagnosis/kb.js";
import type { SimpleKnowledge } from "./view.js";

/**
 * The core's knowledge base at the farmers' level. A class it does not know (a model newer than the texts)
 * gives undefined, and the renderer falls back to the texts stored with the result.
 */
export function simpleKnowledge(kb: Knowledge): SimpleKnowledge {
  return {
    describe(classId, language) {
      try {
        const { name, description } = kb.describe(classId, language, "simple");
        return { name, description };
      } catch {
        return undefined;
      }
    },
    treatment(classIds, language) {
      try {
        const { immediate_actions, prevention } = kb.treatment(classIds, language, "simple");
        return { immediateActions: immediate_actions, prevention };
      } catch {
        return undefined;
      }
    },
  };
}
