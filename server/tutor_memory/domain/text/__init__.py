"""The one text toolkit: normalise, words, sentences, phrases, words with their spans, and the
Markdown inline markup two readers share. Every function runs in time linear in its input,
whatever the input is (hostile text included); the tests under tests/domain/text show it."""
