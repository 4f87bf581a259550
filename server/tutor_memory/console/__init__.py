"""The read-only web console (issue 17): see what the tutor remembers about a student, and why a
block said what it said. A layer beside the API: it reads through the same use cases."""
