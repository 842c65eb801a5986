"""Side inputs of a recommender evaluation (prefeval.io.side): every format, the toolkits' column
names, and the one-line errors and notes of bad ones."""

import pandas as pd
import pytest

from prefeval.errors import InputError
from prefeval.io.side import ITEM_FEATURES, ITEM_GROUPS, ITEMS, TRAIN, USER_GROUPS, read_side


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text", [
    "user,group\nu1,cold\nu2,active\n",                # LensKit's name, CSV
    "user_id\tgroup\nu1\tcold\nu2\tactive\n",          # RecBole's, TSV
    "userID,category\nu1,cold\nu2,active\n",           # Microsoft Recommenders'
    "u1 cold\nu2  active\n",                            # TREC style, no header
])
def test_user_groups_in_every_form(tmp_path, text):
    table = read_side(write(tmp_path, "groups", text), USER_GROUPS)
    assert table.mapping() == {"u1": "cold", "u2": "active"}


def test_columns_found_by_name_whatever_their_order(tmp_path):
    path = write(tmp_path, "train.csv", "timestamp,rating,itemId,userId\n5,4.0,i9,u1\n6,3.0,i8,u2\n")
    table = read_side(path, TRAIN)
    assert table.keys.tolist() == ["u1", "u2"] and table.values.tolist() == ["i9", "i8"]


def test_recbole_atomic_files_types_after_the_colon(tmp_path):
    """RecBole's atomic files type their columns (``user_id:token``): the name before the colon counts,
    whatever the columns' order, and the type is not taken for a column of its own."""
    inter = write(tmp_path, "ml.inter", "item_id:token\tuser_id:token\trating:float\ttimestamp:float\n"
                                        "i9\tu1\t4\t5\ni8\tu2\t3\t6\n")
    table = read_side(inter, TRAIN)
    assert table.keys.tolist() == ["u1", "u2"] and table.values.tolist() == ["i9", "i8"]
    assert table.lines.tolist() == [2, 3]
    groups = read_side(write(tmp_path, "ml.item", "item_id:token\tprovider:token\ni9\tmajor\n"), ITEM_GROUPS)
    assert groups.mapping() == {"i9": "major"}


def test_dataframe_and_parquet(tmp_path):
    frame = pd.DataFrame({"itemID": ["i1", "i1", "i2"], "genre": ["a", "b", "a"]})
    table = read_side(frame, ITEM_FEATURES)
    assert list(zip(table.keys.tolist(), table.values.tolist())) == [("i1", "a"), ("i1", "b"), ("i2", "a")]
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "f.parquet")
    again = read_side(str(tmp_path / "f.parquet"), ITEM_FEATURES)
    assert again.keys.tolist() == table.keys.tolist() and again.values.tolist() == table.values.tolist()


def test_catalogue_is_one_column(tmp_path):
    assert read_side(write(tmp_path, "items", "item\ni1\ni2\n"), ITEMS).key_set() == {"i1", "i2"}


@pytest.mark.parametrize("name, separator", [("g.csv", ","), ("g.tsv", "\t")])  # read by pandas; by numpy
def test_a_user_in_two_groups_is_an_error_at_its_line(tmp_path, name, separator):
    text = "user,group\nu1,cold\nu2,active\nu1,active\n".replace(",", separator)
    path = write(tmp_path, name, text)
    with pytest.raises(InputError) as caught:
        read_side(path, USER_GROUPS)
    assert str(caught.value) == (f"{path}:4: user 'u1' is in two groups ('cold' and 'active'); "
                                 "a user belongs to one group")


def test_an_item_in_two_item_groups_from_a_dataframe_names_the_row():
    with pytest.raises(InputError, match=r"item 'i1' is in two groups .* \(row 2\)"):
        read_side(pd.DataFrame({"item": ["i1", "i2", "i1"], "provider": ["p", "q", "q"]}), ITEM_GROUPS)


def test_missing_value_and_empty_table(tmp_path):
    path = write(tmp_path, "g.csv", "user,group\nu1,\n")
    with pytest.raises(InputError, match=r"g.csv:2: column 'group' is missing a value"):
        read_side(path, USER_GROUPS)
    with pytest.raises(InputError, match="no rows"):
        read_side(write(tmp_path, "e.csv", "user,group\n"), USER_GROUPS)


@pytest.mark.parametrize("text", [
    "user\titem\tscore\nu1\ti9\t4\nu2\ti8\t3\nu1\ti8\t5\n",     # a header, tabs
    "u1\ti9\t4\nu2\ti8\t3\nu1\ti8\t5\n",                        # no header, tabs
    "u1 i9\nu2 i8\nu1 i8",                                       # single spaces, no final line end
    "item_id:token\tuser_id:token\ni9\tu1\ni8\tu2\ni8\tu1\n",    # RecBole's, columns swapped
    "user\titem\nu1\ti9\nu2  \ti8\nu1\ti8\n",                   # spaces in a field: pandas reads it
    "user\titem\r\nu1\ti9\r\nu2\ti8\r\nu1\ti8\r\n",              # CRLF: pandas reads it
])
def test_the_fast_reader_and_pandas_read_the_same_rows(tmp_path, text, monkeypatch):
    """Rows of one tab (or one space) between fields are read with numpy (io.side._plain_rows); any
    other text by pandas. Both give the same rows, texts and lines."""
    import prefeval.io.side as side

    path = write(tmp_path, "train.tsv", text)
    fast = read_side(path, TRAIN)
    monkeypatch.setattr(side, "_plain_rows", lambda *args, **kwargs: None)
    slow = read_side(path, TRAIN)
    assert fast.keys.tolist() == slow.keys.tolist() and fast.values.tolist() == slow.values.tolist()
    assert fast.lines.tolist() == slow.lines.tolist()
    assert fast.keys.keys.tolist() == slow.keys.keys.tolist()  # the keys docids are matched by
    assert fast.keys.tolist() == ["u1", "u2", "u1"] and fast.values.tolist() == ["i9", "i8", "i8"]


def test_a_header_of_tabs_over_rows_of_spaces_is_pandas_error(tmp_path):
    path = write(tmp_path, "train.tsv", "user\titem\nu1 i9\nu2 i8\n")
    with pytest.raises(InputError, match=r"train.tsv:2: column 'item' is missing a value"):
        read_side(path, TRAIN)


def test_the_fast_reader_reads_one_column_and_names_too_few(tmp_path):
    assert read_side(write(tmp_path, "i.tsv", "item\ni1\ni2\n"), ITEMS).keys.tolist() == ["i1", "i2"]
    with pytest.raises(InputError, match="has too few columns for item-groups"):
        read_side(write(tmp_path, "one.tsv", "item\ni1\ni2\n"), ITEM_GROUPS)
