from escalated.tui.validation import NULL, check_form, check_number

AMOUNT = {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 0.01}
CODE = {"type": "select", "name": "code", "label": "Code", "options": [{"value": "a", "label": "A"}]}


def test_numbers_on_the_step_grid_pass_as_json_numbers():
    assert check_number(AMOUNT, "12.34") == (12.34, None)
    assert check_number(AMOUNT, "12") == (12, None)


def test_numbers_below_min_are_refused():
    assert check_number(AMOUNT, "-1")[1] == "must be at least 0"


def test_numbers_off_the_step_grid_are_refused():
    assert check_number(AMOUNT, "1.005")[1] == "must be 0 plus a multiple of 0.01"
    assert check_number({"name": "n", "min": 1, "step": 5}, "6") == (6, None)
    assert check_number({"name": "n", "min": 1, "step": 5}, "5")[1] == "must be 1 plus a multiple of 5"


def test_text_that_is_not_a_number_is_refused():
    assert check_number(AMOUNT, "abc")[1] == "'abc' is not a number"
    assert check_number(AMOUNT, "nan")[1] == "'nan' is not a number"
    assert check_number(AMOUNT, " ")[1] == "required"
    # A Decimal, but no JSON number (and the step check's modulo raised on it).
    assert check_number(AMOUNT, "1e999")[1] == "'1e999' is not a number"


def test_a_form_needs_a_choice_and_every_field():
    result = check_form([AMOUNT, CODE], choice=None, values={"amount": "", "code": NULL})
    assert result.errors == {"choice": "pick a choice", "amount": "required", "code": "pick one"}


def test_a_valid_form_yields_the_response():
    result = check_form([AMOUNT, CODE], choice="approve", values={"amount": "5.5", "code": "a"})
    assert result.ok and result.response == {"amount": 5.5, "code": "a"}
