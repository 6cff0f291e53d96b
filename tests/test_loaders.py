"""Real-format loaders (hetfl_explore.foundation.loaders) on fixture files written here, byte by byte, in each dataset's own format.

The fixtures do not use the package's `fake_*` writers, so a misunderstanding of a format cannot hide in both the
writer and the reader. Their contents follow the real files (header lines, column names, value spellings, file names).
"""
import gzip, struct, warnings
from pathlib import Path
import numpy as np
import pytest
import torch
from PIL import Image

from hetfl_explore.foundation.loaders import (load_waterbirds, load_spawrious, load_mnist, load_celeba, load_utkface, load_fairface,
                                   read_idx, fake_waterbirds, fake_spawrious, fake_mnist, fake_celeba, fake_utkface,
                                   fake_fairface, CELEBA_ATTRIBUTES)
from hetfl_explore.foundation.datasets import make_federated

def jpeg(path, colour, size=(12, 10)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new('RGB', size, colour).save(path)

# ---------------------------------------------------------------- WaterBirds (WILDS metadata.csv)
WATERBIRDS_CSV = """img_id,img_filename,y,split,place,place_filename
1,001.Black_footed_Albatross/Black_Footed_Albatross_0046_18.jpg,1,0,1,/o/ocean/00002178.jpg
2,001.Black_footed_Albatross/Black_Footed_Albatross_0009_34.jpg,1,0,0,/b/bamboo_forest/00003251.jpg
3,011.Rusty_Blackbird/Rusty_Blackbird_0015_6885.jpg,0,0,0,/b/bamboo_forest/00001234.jpg
4,011.Rusty_Blackbird/Rusty_Blackbird_0078_6883.jpg,0,1,0,/f/forest/broadleaf/00000012.jpg
5,011.Rusty_Blackbird/Rusty_Blackbird_0045_6860.jpg,0,2,1,/l/lake/natural/00003150.jpg
"""

@pytest.fixture
def waterbirds(tmp_path):
    root = tmp_path / 'waterbirds_v1.0'; root.mkdir()
    (root / 'metadata.csv').write_text(WATERBIRDS_CSV)
    for i, line in enumerate(WATERBIRDS_CSV.splitlines()[1:]):
        jpeg(root / line.split(',')[1], (40 * i, 100, 200))
    return tmp_path

def test_waterbirds(waterbirds):
    tr = load_waterbirds(waterbirds, 'train', size=8)
    np.testing.assert_array_equal(tr.counts(), [[1, 0], [1, 1]])      # rows landbird/waterbird, cols land/water
    assert tr.x.shape == (3, 3, 8, 8) and tr.x.dtype == torch.float32
    assert len(load_waterbirds(waterbirds / 'waterbirds_v1.0', 'val', size=4)) == 1
    te = load_waterbirds(waterbirds, 'test', size=4)
    assert te.y.tolist() == [0] and te.a.tolist() == [1]
    assert len(load_waterbirds(waterbirds, 'all', size=4)) == 5

def test_waterbirds_errors(waterbirds, tmp_path):
    with pytest.raises(FileNotFoundError, match="no 'metadata.csv'"): load_waterbirds(tmp_path / 'x')
    (waterbirds / 'waterbirds_v1.0' / '011.Rusty_Blackbird' / 'Rusty_Blackbird_0015_6885.jpg').unlink()
    with pytest.raises(FileNotFoundError, match='1 WaterBirds image file'): load_waterbirds(waterbirds, 'train')
    (waterbirds / 'waterbirds_v1.0' / 'metadata.csv').write_text('img_id,img_filename,y,split\n1,a.jpg,0,0\n')
    with pytest.raises(ValueError, match=r"missing column\(s\) \['place'\]"): load_waterbirds(waterbirds)
    with pytest.raises(ValueError, match="split='dev'"): load_waterbirds(waterbirds, 'dev')

def test_waterbirds_into_make_federated(tmp_path):
    fake_waterbirds(tmp_path / 'wb', counts=((4, 2), (2, 4)))
    pool, test = load_waterbirds(tmp_path / 'wb', size=8), load_waterbirds(tmp_path / 'wb', 'test', size=8)
    Ns = np.array([[[2, 1], [1, 2]], [[2, 1], [1, 2]]])
    fd = make_federated(pool, Ns, test_pool=test, seed=0)
    np.testing.assert_array_equal(fd.interaction(), Ns)
    np.testing.assert_array_equal(fd.test_interaction(), [[4, 2], [2, 4]])
    carved = make_federated(pool, Ns[:1], test_per_group=1, seed=0)
    np.testing.assert_array_equal(carved.test_interaction(), np.ones((2, 2)))

# ---------------------------------------------------------------- Spawrious (spawrious224/{0,1}/<location>/<breed>/)
def test_spawrious(tmp_path):
    base = tmp_path / 'spawrious224'
    for folder, n in (('0', 2), ('1', 1)):
        for loc in ('beach', 'snow', 'jungle'):
            for breed in ('labrador', 'dachshund', 'corgi'):
                for i in range(n): jpeg(base / folder / loc / breed / f'{i}.png', (i * 50, 80, 10))
    (base / '0' / 'beach' / 'labrador' / 'notes.txt').write_text('not an image')
    p = load_spawrious(tmp_path, size=6)
    np.testing.assert_array_equal(p.counts(), [[3, 3], [3, 3]])
    assert p.class_names == ['labrador', 'dachshund'] and p.attr_names == ['beach', 'snow']
    q = load_spawrious(base, breeds=('corgi', 'labrador'), locations=('jungle', 'beach', 'snow'), folders=('1',), size=4)
    np.testing.assert_array_equal(q.counts(), np.ones((2, 3)))
    assert load_spawrious(tmp_path, max_per_group=2, seed=1, size=4).counts().max() == 2
    with pytest.raises(FileNotFoundError, match=r'spawrious224/0/beach/bulldog/'): load_spawrious(tmp_path, breeds=('bulldog',))
    with pytest.raises(ValueError, match="breeds='poodle'"): load_spawrious(tmp_path, breeds=('poodle', 'corgi'))

def test_fake_spawrious_layout(tmp_path):
    fake_spawrious(tmp_path / 'spawrious224', per_folder=1, folders=('0',))
    dirs = sorted(str(d.relative_to(tmp_path)) for d in (tmp_path / 'spawrious224' / '0').glob('*/*'))
    assert len(dirs) == 24 and 'spawrious224/0/snow/corgi' in dirs

# ---------------------------------------------------------------- MNIST (torchvision IDX files)
def idx_bytes(arr, magic):
    return struct.pack('>i', magic) + b''.join(struct.pack('>i', d) for d in arr.shape) + arr.astype(np.uint8).tobytes()

@pytest.fixture
def mnist_root(tmp_path):
    rng = np.random.default_rng(0)
    raw = tmp_path / 'MNIST' / 'raw'; raw.mkdir(parents=True)
    data = {}
    for prefix, n in (('train', 30), ('t10k', 10)):
        x, y = rng.integers(0, 256, (n, 28, 28)), rng.integers(0, 10, n)
        (raw / f'{prefix}-images-idx3-ubyte').write_bytes(idx_bytes(x, 2051))
        (raw / f'{prefix}-labels-idx1-ubyte').write_bytes(idx_bytes(y, 2049))
        data[prefix] = (x, y)
    return tmp_path, data

def test_mnist(mnist_root):
    root, data = mnist_root
    x, y = load_mnist(root)
    np.testing.assert_array_equal(x.numpy(), data['train'][0]); np.testing.assert_array_equal(y.numpy(), data['train'][1])
    assert x.dtype == torch.uint8 and y.dtype == torch.int64
    assert len(load_mnist(root, train=False)[0]) == 10

def test_mnist_is_torchvisions_layout(mnist_root):
    """torchvision (download=False) reads the same files to the same tensors."""
    root, _ = mnist_root
    from torchvision.datasets import MNIST
    ds = MNIST(str(root), train=True, download=False)
    x, y = load_mnist(root)
    assert torch.equal(ds.data, x) and torch.equal(ds.targets, y)

def test_mnist_gz_and_errors(mnist_root, tmp_path):
    root, data = mnist_root
    raw = root / 'MNIST' / 'raw'
    for f in raw.glob('t10k-*'):
        f.with_name(f.name + '.gz').write_bytes(gzip.compress(f.read_bytes())); f.unlink()
    np.testing.assert_array_equal(load_mnist(root, train=False)[1].numpy(), data['t10k'][1])
    (raw / 'train-labels-idx1-ubyte').unlink()
    with pytest.raises(FileNotFoundError, match='MNIST/raw/train-labels-idx1-ubyte'): load_mnist(root)
    bad = tmp_path / 'bad-idx'; bad.write_bytes(struct.pack('>i', 0x0D03) + b'\0' * 8)
    with pytest.raises(ValueError, match='not an unsigned-byte IDX'): read_idx(bad)

def test_fake_mnist_and_cmnist(tmp_path):
    fake_mnist(tmp_path, n_train=400, n_test=10)
    d = load_mnist(tmp_path)
    fd = make_federated('cmnist', np.array([[[20, 5], [5, 20]]]), test_per_group=10, digits=d, seed=0, size=14)
    np.testing.assert_array_equal(fd.interaction()[0], [[20, 5], [5, 20]])

# ---------------------------------------------------------------- CelebA (torchvision's celeba/ folder)
def celeba_line(name, male, wavy, smiling=-1):
    vals = [-1] * 40
    vals[CELEBA_ATTRIBUTES.index('Male')], vals[CELEBA_ATTRIBUTES.index('Wavy_Hair')] = male, wavy
    vals[CELEBA_ATTRIBUTES.index('Smiling')] = smiling
    return name + ''.join(f'{v:3d}' for v in vals)   # real file: "000001.jpg -1  1  1 -1 ..."

@pytest.fixture
def celeba_root(tmp_path):
    folder = tmp_path / 'celeba'
    rows = [('000001.jpg', -1, 1, 0, 2880), ('000002.jpg', -1, 1, 0, 2937), ('000003.jpg', 1, -1, 0, 8692),
            ('000004.jpg', 1, 1, 1, 5805), ('000005.jpg', -1, -1, 2, 9295), ('000006.jpg', -1, 1, 0, 2880)]
    folder.mkdir()
    # the real header: the number of images, then the 40 names (with a trailing space)
    (folder / 'list_attr_celeba.txt').write_text(f'{len(rows)}\n' + ' '.join(CELEBA_ATTRIBUTES) + ' \n' +
                                                 '\n'.join(celeba_line(n, m, w) for n, m, w, _, _ in rows) + '\n')
    (folder / 'list_eval_partition.txt').write_text(''.join(f'{n} {s}\n' for n, _, _, s, _ in rows))
    (folder / 'identity_CelebA.txt').write_text(''.join(f'{n} {i}\n' for n, _, _, _, i in rows))
    for k, (n, *_) in enumerate(rows): jpeg(folder / 'img_align_celeba' / n, (k * 40, 0, 0), size=(178, 218))
    return tmp_path

def test_celeba(celeba_root):
    tr = load_celeba(celeba_root, 'train', size=8)
    assert tr.class_names == ['not Wavy_Hair', 'Wavy_Hair'] and tr.attr_names == ['male', 'female']
    np.testing.assert_array_equal(tr.counts(), [[1, 0], [0, 3]])   # 000003 straight male; 000001/2/6 wavy female
    assert sorted(tr.identity.tolist()) == [2880, 2880, 2937, 8692]
    assert len(load_celeba(celeba_root, 'valid', size=4)) == 1 and len(load_celeba(celeba_root, 'all', size=4)) == 6
    sm = load_celeba(celeba_root, 'all', target='Smiling', protected='Wavy_Hair', size=4)
    assert sm.y.sum() == 0 and sm.attr_names == ['not Wavy_Hair', 'Wavy_Hair']

def test_celeba_errors(celeba_root, tmp_path):
    with pytest.raises(ValueError, match="protected='Gender'"): load_celeba(celeba_root, protected='Gender')
    with pytest.raises(FileNotFoundError, match=r'<root>/celeba/'): load_celeba(tmp_path / 'nowhere')
    (celeba_root / 'celeba' / 'list_eval_partition.txt').unlink()
    with pytest.raises(FileNotFoundError, match='list_eval_partition.txt'): load_celeba(celeba_root)

def test_fake_celeba_by_identity(tmp_path):
    fake_celeba(tmp_path, individuals=((3, 2), (2, 3)), images_per_identity=2)
    p = load_celeba(tmp_path, 'all', size=8)
    fd = make_federated(p, np.array([[[1, 1], [1, 1]], [[1, 0], [0, 1]]]), by='identity', test_per_group=1, seed=2)
    np.testing.assert_array_equal(fd.interaction(), [[[2, 2], [2, 2]], [[2, 0], [0, 2]]])

# ---------------------------------------------------------------- UTKFace ([age]_[gender]_[race]_[date&time].jpg)
def test_utkface(tmp_path):
    names = ['1_0_0_20161219140623097.jpg.chip.jpg', '26_1_2_20170116174525125.jpg.chip.jpg',
             '35_0_1_20170117134155063.jpg', '50_1_0_20170109150920436.jpg', '8_1_4_20170109203009211.jpg.chip.jpg',
             '61_1_20170109142408075.jpg.chip.jpg']   # the last one is a real malformed name (no race field)
    for k, n in enumerate(names): jpeg(tmp_path / 'UTKFace' / n, (k * 30, 50, 50), size=(200, 200))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        p = load_utkface(tmp_path, size=8)
    assert any('skipped 1 file' in str(x.message) and '61_1_20170109142408075' in str(x.message) for x in w)
    # rows gender (male, female), cols race (white, non-white)
    np.testing.assert_array_equal(p.counts(), [[1, 1], [1, 2]])
    with pytest.warns(UserWarning, match='skipped 1 file'): q = load_utkface(tmp_path, target='race_all', protected='gender', size=4)
    np.testing.assert_array_equal(q.counts(), [[1, 1], [1, 0], [0, 1], [0, 0], [0, 1]])
    with pytest.raises(FileNotFoundError, match='UTKFace folder: not found'): load_utkface(tmp_path / 'none')
    (tmp_path / 'empty').mkdir()
    with pytest.raises(FileNotFoundError, match=r'no \[age\]_\[gender\]_\[race\]_\[date&time\].jpg files'): load_utkface(tmp_path / 'empty')

def test_fake_utkface(tmp_path):
    fake_utkface(tmp_path, counts=((2, 1), (1, 2)))
    np.testing.assert_array_equal(load_utkface(tmp_path, size=8).counts(), [[2, 1], [1, 2]])

# ---------------------------------------------------------------- FairFace (fairface_label_{train,val}.csv)
FAIRFACE_CSV = """file,age,gender,race,service_test
train/1.jpg,50-59,Male,East Asian,True
train/2.jpg,30-39,Female,Indian,False
train/3.jpg,3-9,Female,Black,False
train/4.jpg,20-29,Female,Middle Eastern,True
train/5.jpg,20-29,Female,White,True
train/6.jpg,more than 70,Male,White,False
train/7.jpg,40-49,Male,Latino_Hispanic,True
"""

def test_fairface(tmp_path):
    (tmp_path / 'fairface_label_train.csv').write_text(FAIRFACE_CSV)
    for i in range(1, 8): jpeg(tmp_path / 'train' / f'{i}.jpg', (i * 30, 0, 0), size=(224, 224))
    p = load_fairface(tmp_path, size=8)
    np.testing.assert_array_equal(p.counts(), [[1, 2], [1, 3]])     # rows male/female, cols white/non-white
    q = load_fairface(tmp_path, target='race_all', protected='gender', size=4)
    assert q.n_classes == 7 and q.counts()[:, 0].tolist() == [1, 0, 1, 0, 0, 0, 1]
    with pytest.raises(FileNotFoundError, match='fairface_label_val.csv'): load_fairface(tmp_path, 'val')
    (tmp_path / 'fairface_label_train.csv').write_text(FAIRFACE_CSV.replace('Latino_Hispanic', 'Martian'))
    with pytest.raises(ValueError, match=r"unknown values \['Martian'\]"): load_fairface(tmp_path)

def test_fake_fairface_and_subsets(tmp_path):
    fake_fairface(tmp_path, counts=((3, 3), (3, 3)))
    p = load_fairface(tmp_path, 'val', max_per_group=2, seed=0, size=8)
    np.testing.assert_array_equal(p.counts(), np.full((2, 2), 2))
    q = load_fairface(tmp_path, 'val', max_per_group=2, seed=0, size=8)
    assert torch.equal(p.x, q.x)

def test_idx_of_no_items_round_trips(tmp_path):
    "An IDX file of zero items is valid: `write_idx` writes it (fake_mnist with n_test=0) and `read_idx` reads it back."
    from hetfl_explore.foundation.loaders import write_idx
    write_idx(tmp_path / 'empty-labels-idx1-ubyte', np.zeros(0, np.uint8))
    assert read_idx(tmp_path / 'empty-labels-idx1-ubyte').shape == (0,)
    fake_mnist(tmp_path, n_train=4, n_test=0)
    x, y = load_mnist(tmp_path, train=False)
    assert x.shape == (0, 28, 28) and y.shape == (0,)
    with pytest.raises(TypeError, match='train=1: expected an instance of bool'): load_mnist(tmp_path, train=1)
