#!/usr/bin/python3
"""A tiny CPU training loop, run to capture how PyTorch + tqdm really print.

Reproduce torch_tqdm.log (Debian 12: apt-get install python3-torch python3-tqdm):
    /usr/bin/python3 torch_tqdm_train.py > torch_tqdm.log 2>&1
tqdm writes its '\r' progress updates to stderr; they stay in the file.
Timings (it/s, elapsed) differ from run to run, so the expected output
(torch_tqdm.expected.jsonl) is checked by hand against the committed log.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

torch.manual_seed(0)
x = torch.randn(256, 8)
y = (x[:, :1] * 2.0 - x[:, 1:2] + 0.1 * torch.randn(256, 1))
train = DataLoader(TensorDataset(x[:128], y[:128]), batch_size=32, shuffle=True)
val = DataLoader(TensorDataset(x[128:], y[128:]), batch_size=64)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
loss_fn = nn.MSELoss()
print(f"model parameters: {sum(p.numel() for p in model.parameters())}, 128 train samples")

for epoch in range(1, 3):
    model.train()
    total = 0.0
    bar = tqdm(train, desc=f"Epoch {epoch}", mininterval=0)
    for xb, yb in bar:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
        bar.set_postfix(loss=loss.item(), lr=opt.param_groups[0]["lr"])
    sched.step()
    model.eval()
    with torch.no_grad():
        val_loss = sum(loss_fn(model(xb), yb).item() * len(xb) for xb, yb in val) / 128
    print(f"epoch {epoch}: train_loss={total / 128:.4f} val_loss={val_loss:.4f}", flush=True)
print("done")
