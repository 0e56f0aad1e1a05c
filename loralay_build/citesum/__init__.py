"""CiteSum (Mao, Zhong and Han 2022): cited paper's abstract -> one citation sentence.

    readers (`read2020`, `readapi`) -> `CitingPaper` / `CitedPaper` (one internal record)
    `sentences`  split a paragraph, keeping each citation span inside one sentence
    `select`     related-work paragraphs, the one-citation rule, the ROUGE gate, REF
    `split`      90/5/5 by a hash of the cited id
    `build`      the two streaming passes, resumable through the run state
"""
