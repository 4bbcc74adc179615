import { describe, expect, it } from "vitest";
import { mentionsImport } from "./import-scan.js";

describe("import scan", () => {
  it("finds the keyword however it is spaced, commented or escaped", () => {
    const found = [
      "import('fs')",
      "x = import ('fs')",
      "/*x*/import('fs')",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal of the submission's own
      "`${import('fs')}`",
      "import/**/('fs')",
      "import\u00a0('fs')",
      "import\u2028('fs')",
      "\ufeffimport('fs')",
      "\\u0069mport('fs')",
      "imp\\u006frt('fs')",
      "\\u{69}mport('fs')",
      "\\u{000069}mport('fs')",
      "import fs from 'fs'",
      "// import nothing",
      "a.import",
      "#import",
    ];
    for (const src of found) expect(mentionsImport(src), src).toBe(true);
  });

  it("lets identifiers that contain the word through", () => {
    const clear = [
      "const important = 1;",
      "reimport()",
      "import_x()",
      "$import",
      "import$",
      "importé",
      "x\u200dimport",
      "\\u0041import",
      "IMPORT",
    ];
    for (const src of clear) expect(mentionsImport(src), src).toBe(false);
  });
});
