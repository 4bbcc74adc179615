// A tiny fixed document collection for the retriever tests (and examples).
// Test data only; no logic.

import type { RetrieverDoc } from "./types.js";

export const FIXTURE_DOCS: RetrieverDoc[] = [
  { id: "d1", title: "Kora Velin", text: "Kora Velin was born in the city of Tamsrun and later moved away." },
  { id: "d2", title: "Tamsrun", text: "Tamsrun is a river city located in the country of Obrelia." },
  { id: "d3", title: "Velmo Works", text: "Velmo Works is an engineering firm founded by Daru Pesko in 1911." },
  { id: "d4", title: "Daru Pesko", text: "Daru Pesko, an inventor, married Kora Velin after the war." },
  { id: "d5", title: "Obrelia", text: "Obrelia is a small country known for its mountain lakes and its capital Nisk." },
  { id: "d6", title: "Nisk", text: "Nisk hosts the headquarters of Velmo Works near the old harbour." },
];
