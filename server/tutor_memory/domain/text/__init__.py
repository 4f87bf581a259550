"""The one text toolkit: normalise, words, sentences, phrases. Every function runs in time linear
in its input, whatever the input is (hostile text included)."""
