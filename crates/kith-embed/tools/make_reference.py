#!/usr/bin/env python3
"""Writes tests/fixtures/minilm_reference.json: token ids (HF BertTokenizerFast,
checked equal to BertTokenizer's) and normalised embeddings from
sentence-transformers for all-MiniLM-L6-v2. Needs: pip install sentence-transformers.
Run from the crate directory: python3 tools/make_reference.py MODEL_DIR
"""
import json, sys
from sentence_transformers import SentenceTransformer
from transformers import BertTokenizer, BertTokenizerFast
# The wheel unpacked with its 1_Pooling/ subdirectory kept.
d = sys.argv[1]
m = SentenceTransformer(d, device='cpu')
print('max_seq_length', m.max_seq_length, file=sys.stderr)
slow = BertTokenizer.from_pretrained(d)
fast = BertTokenizerFast.from_pretrained(d)
long = ("Memory systems for language agents store facts about people, places and events, "
        "then retrieve the relevant ones when a new conversation starts; ranking them well "
        "needs both lexical and semantic signals. ") * 12
texts = [
    "The quick brown fox jumps over the lazy dog.",
    "Café déjà vu: naïve façade, résumé & crème brûlée!",
    "In 2023, revenue grew 12.5% to $4,200,000 (Q3: +7%).",
    "I love this 😀🎉 so much!!!",
    "東京は日本の首都です。 Tokyo is the capital of Japan.",
    "Ich wohne in München und arbeite bei Siemens — seit 2019.",
    "unaffable antidisestablishmentarianism " + "x" * 120,
    "  Tabs\tand\nnewlines\r\n and   spaces  ",
    "zero\u200bwidth\u0007bell ΟΔΥΣΣΕΥΣ",
    "",
    "I adopted a puppy last week",
    long,
]
embs = m.encode(texts, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
out = []
for t, e in zip(texts, embs):
    ids_fast = fast(t, truncation=True, max_length=256)['input_ids']
    ids_slow = slow(t, truncation=True, max_length=256)['input_ids']
    if ids_fast != ids_slow:
        print('fast/slow differ for', repr(t), file=sys.stderr)
    out.append({"text": t, "ids": ids_fast, "embedding": [round(float(v), 7) for v in e]})
    print(len(ids_fast), repr(t[:40]), file=sys.stderr)
json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2",
           "generated_by": "sentence-transformers " + __import__('sentence_transformers').__version__ + ", transformers " + __import__('transformers').__version__ + ", BertTokenizerFast (ids equal BertTokenizer's)",
           "cases": out}, open('tests/fixtures/minilm_reference.json', 'w'), ensure_ascii=False)
