from escalated.ids import new_id


def test_ids_made_one_after_another_sort_in_that_order():
    ids = [new_id("esc") for _ in range(5000)]  # many share a millisecond
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_carry_their_prefix_and_a_ulid():
    value = new_id("dlv")
    assert value.startswith("dlv_") and len(value) == 4 + 26
