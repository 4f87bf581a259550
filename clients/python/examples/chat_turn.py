"""One chat turn with Tutor Memory, as a chat service does it.

    python clients/python/examples/chat_turn.py --target localhost:50051 --student ada \
        --subject biology --question "What did we say about osmosis?" \
        --answer "In July we saw that osmosis moves water toward more solute." \
        --legacy-assessment "ASSESSMENT HISTORY: No quiz attempts recorded."

1. append the student's question; 2. BuildBlock; 3. compose the prompt (SPEC R6.6); 4. the chat
model answers (here: --answer stands in for it); 5. append the answer; 6. AnnotateAnswer with the
memories the prompt showed. Prints the prompt, then the ids the turn wrote.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence

import grpc

from tutor_memory_client import MemoryClient, PromptParts, compose_prompt, pb

# Tokens the memory block may use in the prompt.
BUDGET_TOKENS = 1500
# Seconds to wait for the block: past the server's own cap (2.5 s), a late block is skipped so
# that a slow memory never holds up the answer (SPEC R6.1).
BLOCK_TIMEOUT = 3.0
# The server's limit on an episode's summary, which must also be one line.
SUMMARY_CHARS = 500


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--token", default=None, help="bearer token (none in development mode)")
    parser.add_argument("--student", required=True)
    parser.add_argument("--subject", required=True)
    parser.add_argument("--question", required=True)
    parser.add_argument("--answer", required=True, help="stands in for the chat model's reply")
    parser.add_argument("--instructions", default="")
    parser.add_argument("--legacy-assessment", default="")
    parser.add_argument("--turn-id", default=None, help="idempotency key of the turn")
    return parser.parse_args(argv)


def episode(args: argparse.Namespace, kind: pb.EpisodeKind, text: str, key: str) -> pb.NewEpisode:
    return pb.NewEpisode(
        student_id=args.student,
        subject_id=args.subject,
        kind=kind,
        summary=" ".join(text.split())[:SUMMARY_CHARS],
        text=text,
        client_key=key,
    )


def build_block(memory: MemoryClient, args: argparse.Namespace) -> pb.BuildBlockReply:
    """The turn's block, or an empty one when it is late or the server is away."""
    try:
        return memory.build_block(
            args.student,
            args.subject,
            args.question,
            budget_tokens=BUDGET_TOKENS,
            timeout=BLOCK_TIMEOUT,
        )
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        if code not in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
            raise
        return pb.BuildBlockReply()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Keys make the turn safe to retry: the same turn id never writes twice.
    turn = args.turn_id or uuid.uuid4().hex
    with MemoryClient(args.target, token=args.token) as memory:
        question = memory.append_episode(
            episode(args, pb.EPISODE_KIND_QUESTION, args.question, f"{turn}-question")
        )
        block = build_block(memory, args)
        prompt = compose_prompt(
            PromptParts(
                instructions=args.instructions,
                memory_block=block.text,
                legacy_assessment=args.legacy_assessment,
                context=[args.question],
            )
        )
        print(prompt)
        answer_text = args.answer  # a real chat service sends `prompt` to its model here
        answer = memory.append_episode(
            episode(args, pb.EPISODE_KIND_ANSWER, answer_text, f"{turn}-answer")
        )
        memory_ids = [m.episode_id for m in block.memories]
        annotation_id = 0
        if block.block_id:
            annotation_id = memory.annotate_answer(
                args.student,
                args.subject,
                answer.episode.episode_id,
                block.block_id,
                memory_ids,
            ).annotation_id
    print(
        f"\nquestion={question.episode.episode_id} answer={answer.episode.episode_id} "
        f"block={block.block_id} memories={memory_ids} annotation={annotation_id}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
