import os
import threading
import uuid

from engine.uuids import new_uuid


def test_new_uuids_are_random_version_4_uuids_in_text_form():
    made = [new_uuid() for _ in range(5000)]
    assert len(set(made)) == len(made)
    for text in made:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text
    # Every variant digit occurs: the two random bits beside the variant are really random.
    assert {text[19] for text in made} == set("89ab")


def test_threads_draw_from_buffers_of_their_own():
    made: list[list[str]] = [[] for _ in range(4)]

    def draw(index: int) -> None:
        made[index].extend(new_uuid() for _ in range(2000))

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [text for batch in made for text in batch]
    assert len(set(every)) == len(every)


def test_a_forked_child_does_not_repeat_its_parents_next_uuids():
    new_uuid()  # the parent's buffer holds unused bytes
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, "".join(new_uuid() for _ in range(10)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    os.waitpid(pid, 0)
    parent = "".join(new_uuid() for _ in range(10))
    assert len(child) == len(parent) == 360
    assert child != parent
